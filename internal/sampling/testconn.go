package sampling

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// TestConnection sends one tiny request (greedy, at most 8 tokens, no retries)
// to ep and returns the model's reply, for the "Test connection" button.
// prompt is what to send (Reach sends the rendered prompt of the
// comparison's first problem, which also tries the template); "" sends a
// short generic prompt. The
// error is an *Error with a message meant to be shown as is, e.g.
// "connect: connection refused at http://gpu1:8000/v1/",
// "401 Unauthorized: invalid API key", or
// "model 'qwen' not found at http://gpu1:8000/v1/ (404 Not Found: ...); the server serves: Qwen/Qwen2.5-7B".
// ep.Timeout, if 0, becomes 30 seconds here.
func TestConnection(ctx context.Context, ep Endpoint, prompt string) (string, error) {
	if ep.Timeout <= 0 {
		ep.Timeout = 30 * time.Second
	}
	ep.MaxConcurrency = 1
	ep.Retry = RetryPolicy{MaxAttempts: 1}
	c, err := New(ep, nil)
	if err != nil {
		return "", err
	}
	if prompt == "" {
		prompt = "1 + 1 ="
		if c.ep.Style == StyleChat {
			prompt = "Reply with the single word: hello"
		}
	}
	out, _, err := c.Sample(ctx, prompt, Params{N: 1, Temperature: 0, MaxTokens: 8})
	if err != nil {
		var e *Error
		if errors.As(err, &e) && strings.HasPrefix(e.Message, "model '") {
			if names := c.modelNames(ctx); len(names) > 0 {
				e.Message += "; the server serves: " + strings.Join(names, ", ")
			}
		}
		return "", err
	}
	return out[0].Text, nil
}

// modelNames lists the models the server serves (GET /models), best effort:
// nil on any failure.
func (c *Client) modelNames(ctx context.Context) []string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	page, err := c.models.List(ctx)
	if err != nil || page == nil {
		return nil
	}
	var names []string
	for _, m := range page.Data {
		names = append(names, m.ID)
	}
	slices.Sort(names)
	if len(names) > 10 {
		names = append(names[:10], fmt.Sprintf("… (%d in all)", len(names)))
	}
	return names
}
