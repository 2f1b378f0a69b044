package ingest

import (
	"archive/zip"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Inspect AI logs (inspect_ai.log): a .json log is one document {version, status, eval, plan,
// results, stats, samples: [...]}; a .eval log is a zip with header.json (the same minus samples;
// _journal/start.json while the run is unfinished) and one samples/<id>_epoch_<n>.json per sample.
// Each sample epoch is one Reach sample (sample index = epoch - 1). Numeric sample ids are
// Inspect's own count from 1 unless the dataset gave ids; string ids are the dataset's.

// readInspectJSON streams a .json log, one sample at a time.
func readInspectJSON(sr *sampleReader, r io.Reader) error {
	d := newDocScanner(r, sr.file, sr.o.Limits)
	sawSamples := false
	err := d.object(func(key string) error {
		switch key {
		case "eval", "plan":
			raw, line, err := d.record()
			if err != nil {
				return err
			}
			if err := checkJSON(where{file: sr.file, line: line, record: key}, raw, sr.o.Limits); err != nil {
				return err
			}
			inspectMeta(&sr.meta, key, u2s(raw))
			return nil
		case "samples":
			sawSamples = true
			if c, err := d.peek(); err != nil || c == 'n' { // "samples": null
				if err != nil {
					return err
				}
				return d.skip()
			}
			return d.array(func(i int) error {
				raw, line, err := d.record()
				if err != nil {
					return err
				}
				w := where{file: sr.file, line: line, record: fmt.Sprintf("samples[%d]", i)}
				if err := checkJSON(w, raw, sr.o.Limits); err != nil {
					return err
				}
				return sr.inspectSample(w, u2s(raw))
			})
		case "status":
			raw, _, err := d.record()
			if err == nil && gjson.Parse(string(raw)).String() == "error" {
				sr.meta.set("status", "error")
			}
			return err
		}
		return d.skip()
	})
	if err != nil {
		return err
	}
	if !sawSamples {
		return &Error{File: sr.file, Msg: "an Inspect log without samples (written with --no-log-samples?): Reach needs each sample's output"}
	}
	return d.end()
}

// readInspectZip reads a .eval log.
func readInspectZip(in *input, file string, o Options) error {
	zr, err := zip.NewReader(in.ra, in.size)
	if err != nil {
		return &Error{File: file, Msg: "not a readable zip archive: " + err.Error()}
	}
	sr := newSampleReader(spec{format: FormatInspect}, file, o)
	var samples []*zip.File
	meta := map[string]*zip.File{}
	for _, f := range zr.File {
		switch {
		case strings.HasPrefix(f.Name, "samples/") && strings.HasSuffix(f.Name, ".json"):
			samples = append(samples, f)
		case f.Name == "header.json" || f.Name == "_journal/start.json":
			meta[f.Name] = f
		}
	}
	if len(samples) == 0 && len(meta) == 0 {
		return &Error{File: file, Msg: "a zip archive that is not an Inspect .eval log (no header.json, no samples/): Reach reads no other zip"}
	}
	read := func(f *zip.File) (string, error) {
		w := where{file: file, record: f.Name}
		if f.UncompressedSize64 > uint64(o.Limits.MaxRecordBytes) {
			return "", w.errorf("", "a sample file of %s, over the limit of %s (set REACH_MAX_LINE_BYTES to raise it)", byteSize(int64(f.UncompressedSize64)), byteSize(int64(o.Limits.MaxRecordBytes)))
		}
		rc, err := f.Open()
		if err != nil {
			return "", w.errorf("", "unreadable in the zip: %v", err)
		}
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(rc, int64(o.Limits.MaxRecordBytes)+1))
		if err != nil {
			return "", w.errorf("", "unreadable in the zip: %v", err)
		}
		if err := checkJSON(w, b, o.Limits); err != nil {
			return "", err
		}
		return u2s(b), nil
	}
	for _, name := range []string{"_journal/start.json", "header.json"} {
		if f := meta[name]; f != nil {
			raw, err := read(f)
			if err != nil {
				return err
			}
			inspectMeta(&sr.meta, "eval", gjson.Get(raw, "eval").Raw)
			inspectMeta(&sr.meta, "plan", gjson.Get(raw, "plan").Raw)
		}
	}
	if len(samples) == 0 {
		return &Error{File: file, Msg: "an Inspect log without samples (written with --no-log-samples?): Reach needs each sample's output"}
	}
	// Sample files are named <id>_epoch_<n>.json; read them in id then epoch order, as a person would list them.
	sort.SliceStable(samples, func(i, j int) bool { return inspectOrder(samples[i].Name) < inspectOrder(samples[j].Name) })
	for _, f := range samples {
		raw, err := read(f)
		if err != nil {
			return err
		}
		if err := sr.inspectSample(where{file: file, record: f.Name}, raw); err != nil {
			return err
		}
	}
	return sr.finish()
}

// inspectOrder sorts "samples/12_epoch_3.json" by (12, 3) when the id is a number, else by name.
func inspectOrder(name string) string {
	base := strings.TrimSuffix(strings.TrimPrefix(name, "samples/"), ".json")
	id, epoch, ok := strings.Cut(base, "_epoch_")
	if n, err := strconv.Atoi(id); err == nil && ok {
		e, _ := strconv.Atoi(epoch)
		return fmt.Sprintf("%020d/%010d", n, e)
	}
	return "~" + base
}

// inspectMeta collects the run's metadata from the log's eval and plan objects.
func inspectMeta(m *RunMeta, key, raw string) {
	if raw == "" {
		return
	}
	v := gjson.Parse(raw)
	switch key {
	case "eval":
		setOnce(&m.Model, v.Get("model").String())
		setOnce(&m.Task, v.Get("task").String())
		setOnce(&m.Date, v.Get("created").String())
		setOnce(&m.ToolVersion, v.Get("packages.inspect_ai").String())
		m.set("dataset", v.Get("dataset.name").String())
		m.set("epochs", v.Get("config.epochs").String())
		v.Get("model_generate_config").ForEach(func(k, val gjson.Result) bool {
			m.set(k.String(), compactJSON(val))
			return true
		})
	case "plan":
		v.Get("config").ForEach(func(k, val gjson.Result) bool {
			m.set(k.String(), compactJSON(val))
			return true
		})
		// Inspect's prompt_template and system_message solvers log their
		// template as a step parameter: the prompt a model was asked with.
		v.Get("steps").ForEach(func(_, step gjson.Result) bool {
			switch step.Get("solver").String() {
			case "prompt_template":
				m.set("prompt_template", step.Get("params.template").String())
			case "system_message":
				m.set("system_message", step.Get("params.template").String())
			}
			return true
		})
	}
}

// inspectSample turns one Inspect sample (one epoch) into a Reach sample.
func (sr *sampleReader) inspectSample(w where, rec string) error {
	s := gjson.Parse(rec)
	if e := s.Get("error"); e.Exists() && e.Type != gjson.Null {
		return w.errorf("error", "the sample failed in Inspect: %.200s (its output is missing; rerun it or leave it out)", compactJSON(e.Get("message")))
	}
	var rc recordCtx
	id := s.Get("id")
	switch id.Type {
	case gjson.Number:
		rc.key, rc.kind = normNumber(id.Raw), KeyIDOrIndex1
	case gjson.String:
		if strings.TrimSpace(id.Str) == "" {
			return w.errorf("id", "empty sample id")
		}
		rc.key, rc.kind = strings.Clone(id.Str), KeyID
	default:
		return w.errorf("id", "want a sample id (number or string), got %s", kindOf(id.Raw))
	}
	rc.idField = "id"
	rc.question = inspectText(s.Get("input"))
	if t := s.Get("target"); t.IsArray() {
		rc.reference = strings.Clone(t.Get("0").String())
	} else {
		rc.reference = strings.Clone(t.String())
	}
	var p pending
	epoch := s.Get("epoch")
	if epoch.Exists() {
		if epoch.Type != gjson.Number || epoch.Int() < 1 || float64(epoch.Int()) != epoch.Num {
			return w.errorf("epoch", "want an epoch number from 1, got %.40s", epoch.Raw)
		}
		p.SampleIndex, p.indexed, p.idxField = int(epoch.Int()-1), true, func() string { return "epoch" }
	}
	choice := s.Get("output.choices.0")
	if !choice.Exists() {
		return w.errorf("output.choices", "no model output in the sample")
	}
	p.Completion = inspectText(choice.Get("message.content"))
	p.FinishReason = strings.Clone(choice.Get("stop_reason").String())
	if to, ok := finishNames[p.FinishReason]; ok {
		p.FinishReason = to
	}
	if n := s.Get("output.usage.output_tokens"); n.Type == gjson.Number && n.Num >= 0 {
		p.CompletionTokens = int(n.Int())
	}
	// The first scorer with a plain value is the verdict; its answer the extracted answer.
	var verr error
	s.Get("scores").ForEach(func(name, sc gjson.Result) bool {
		v := sc.Get("value")
		if v.IsObject() || v.IsArray() || !v.Exists() {
			return true
		}
		field := "scores." + name.String() + ".value"
		p.Correct, verr = w.verdict(field, v.Raw, sr.threshold)
		p.Extracted = strings.Clone(sc.Get("answer").String())
		return false
	})
	if verr != nil {
		return verr
	}
	sr.pend = append(sr.pend, p)
	return sr.emit(w, rc)
}

// inspectText reads Inspect content: a string, a list of content parts ({type: "text", text}), or
// a list of chat messages each with such content. Reasoning parts are left out.
func inspectText(v gjson.Result) string {
	switch {
	case v.Type == gjson.String:
		return strings.Clone(v.Str)
	case v.IsArray():
		var parts []string
		v.ForEach(func(_, item gjson.Result) bool {
			switch {
			case item.Type == gjson.String:
				parts = append(parts, strings.Clone(item.Str))
			case item.Get("content").Exists(): // a chat message
				if item.Get("role").String() != "system" {
					parts = append(parts, inspectText(item.Get("content")))
				}
			case item.Get("type").String() == "text":
				parts = append(parts, strings.Clone(item.Get("text").String()))
			}
			return true
		})
		return strings.Join(parts, "\n")
	}
	return ""
}
