package metrics

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
)

// Unmatched is the route label of a request no route matched.
const Unmatched = "unmatched"

// Middleware counts the requests a chi router answers and times them, by
// route pattern, method and status code. Use it on the top router: the
// pattern is read after routing, when chi has filled it in.
func Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		route := Unmatched
		if rc := chi.RouteContext(r.Context()); rc != nil {
			// The pattern the request matched, from the router's own
			// routes ("/comparisons/{id}/"), never the requested path.
			if p := rc.RoutePattern(); p != "" {
				route = p
			}
		}
		method := oneOf(r.Method, httpMethods) // a client may send any method name
		httpRequests.WithLabelValues(route, method, codeLabel(ww.Status())).Inc()
		httpDuration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
	})
}

var httpMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions}
