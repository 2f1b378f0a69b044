package ingest

const (
	// FormatOpenRLHF: OpenRLHF batch_inference.py output, JSONL of {"input", "output"} (generate and
	// generate_vllm; best_of_n copies of each prompt) or {"input", "output", "reward"} (rm: a reward
	// model's score, not a verdict). No id: matched by the statement in the prompt.
	FormatOpenRLHF Format = "openrlhf-batch"
	// FormatSimpleEvals: simple-evals <eval>_<model>_<date>_allresults.json: {"score", "metrics",
	// "htmls", "convos", "metadata"}, one convo (prompt messages and the sampled assistant
	// messages) and one html (with the sample's score) per example.
	FormatSimpleEvals Format = "simple-evals"
	// FormatLiveCodeBench: LiveCodeBench code generation output and eval_all.json, a JSON list of
	// problems: question_id, question_content, output_list, code_list, graded_list?, metadata?.
	FormatLiveCodeBench Format = "livecodebench"
	// FormatDeepSeekMath: DeepSeek-Math evaluation predictions*.json, a JSON list of the task's rows
	// (messages, answer) with prompt, model_output, prediction (or program_output) and accuracy.
	FormatDeepSeekMath Format = "deepseek-math"
)
