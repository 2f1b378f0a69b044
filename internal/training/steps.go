// Package training follows an RL training run over its checkpoints: which
// samples file belongs to which training step (the folders and names
// trainers write), the problems gained, lost and regained between
// checkpoints, and the sharpening tax of each checkpoint's pass@k curve.
// It is pure: callers read files and counts.
package training

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// stepNames are the file and folder names trainers give a checkpoint's
// samples, each with the step as its one group:
//   - verl's validation dump, RayPPOTrainer._dump_generations: {global_steps}.jsonl
//     (a bare number only before .jsonl: MathArena names its per-problem
//     files {problem}.json)
//   - TRL's GRPOTrainer: completions/completions_{step:05d}.parquet, and as
//     wandb logs it, media/table/completions_{step}_{hash}.table.json
//   - checkpoint folders: step-100/, global_step_100/ (verl, DeepSpeed),
//     checkpoint-100/ (Hugging Face Trainer), ckpt_100/, iter_0000100/ (Megatron)
var stepNames = []*regexp.Regexp{
	regexp.MustCompile(`^(\d+)$`),
	regexp.MustCompile(`^completions_(\d+)(?:_[0-9a-f]{8,})?$`),
	regexp.MustCompile(`(?i)^(?:global_step|step|checkpoint|ckpt|iter|iteration)[-_]?(\d+)$`),
}

// StepOf returns the training step a samples file's path names: the
// file's name without its extensions, else the nearest folder's name (rel
// is the path below the folder the user named, so names above it never
// count). ok is false when no part names a step.
func StepOf(rel string) (step int, ok bool) {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i := len(parts) - 1; i >= 0; i-- {
		name, names := parts[i], stepNames[2:] // a folder: a named step (a bare number may be a year or a repeat)
		if i == len(parts)-1 {
			name, names = stem(name), stepNames[1:]
			if strings.HasPrefix(strings.ToLower(parts[i][len(name):]), ".jsonl") {
				// verl's dump is {step}.jsonl; a bare number before .json
				// is a problem's file (MathArena: one per problem).
				names = stepNames
			}
		}
		for _, re := range names {
			if m := re.FindStringSubmatch(name); m != nil {
				n, err := strconv.Atoi(m[1])
				if err == nil && n >= 0 {
					return n, true
				}
			}
		}
	}
	return 0, false
}

// stem drops a file name's extensions: "100.jsonl.gz" is "100",
// "completions_40_0a1b2c3d4e5f6a7b8c9d.table.json" is "completions_40_…".
func stem(name string) string {
	for {
		ext := filepath.Ext(name)
		if ext == "" || ext == name {
			return name
		}
		switch strings.ToLower(ext) {
		case ".jsonl", ".json", ".parquet", ".gz", ".zst", ".table", ".csv", ".eval", ".zip":
			name = strings.TrimSuffix(name, ext)
		default:
			return name
		}
	}
}

// Checkpoint is one training step's samples files.
type Checkpoint struct {
	Step  int
	Files []string
}

// Split groups one model's files (paths under root, as ingest.ModelFiles
// lists them) by the training step their names give, steps ascending and
// each step's files in the given order. It returns nil when fewer than two
// steps are named (the files are one model, pooled), and an error naming
// the file when some files name a step and others do not: a README or a
// summary beside the step files would otherwise be read as samples.
func Split(root string, files []string) ([]Checkpoint, error) {
	byStep := map[int][]string{}
	var without []string
	for _, f := range files {
		rel, err := filepath.Rel(root, f)
		if err != nil || rel == "." {
			rel = filepath.Base(f)
		}
		if s, ok := StepOf(rel); ok {
			byStep[s] = append(byStep[s], f)
		} else {
			without = append(without, f)
		}
	}
	if len(byStep) < 2 {
		return nil, nil
	}
	if len(without) > 0 {
		return nil, fmt.Errorf("%s names no training step while %d files name %d steps (e.g. %s): move it out of the folder, or give the step files as a pattern",
			without[0], len(files)-len(without), len(byStep), filepath.Base(firstOf(byStep)))
	}
	steps := make([]int, 0, len(byStep))
	for s := range byStep {
		steps = append(steps, s)
	}
	slices.Sort(steps)
	out := make([]Checkpoint, len(steps))
	for i, s := range steps {
		out[i] = Checkpoint{Step: s, Files: byStep[s]}
	}
	return out, nil
}

func firstOf(m map[int][]string) string {
	best := -1
	for s := range m {
		if best < 0 || s < best {
			best = s
		}
	}
	return m[best][0]
}
