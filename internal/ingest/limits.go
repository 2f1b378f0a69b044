package ingest

// Limits bound what one record of an input may cost. Every reader checks them and refuses a record
// beyond them with an *Error naming the line (or record) and the limit, so memory stays bounded
// whatever the file: see ReadSamples for the bound.
type Limits struct {
	// MaxRecordBytes is the longest JSONL line, the largest element of a JSON document's sample list
	// (Inspect .json, OpenCompass, EvalPlus results), the largest sample file inside an Inspect .eval
	// zip, and the largest parquet row once read. Default 64 MiB.
	MaxRecordBytes int
	// MaxDepth is the deepest nesting of JSON lists and objects in a record. Default 128: sample
	// records of every supported tool nest less than 20 deep.
	MaxDepth int
	// MaxSpoolBytes bounds a file copied to a temporary file because it needs random access (parquet
	// or a zip that arrived as a stream, or compressed). Default 16 GiB.
	MaxSpoolBytes int64
}

// DefaultLimits are the limits ReadSamples and ReadDataset use unless told otherwise
// (Options.Limits). reach reads REACH_MAX_LINE_BYTES into MaxRecordBytes.
var DefaultLimits = Limits{MaxRecordBytes: 64 << 20, MaxDepth: 128, MaxSpoolBytes: 16 << 30}

func (l Limits) withDefaults() Limits {
	if l.MaxRecordBytes <= 0 {
		l.MaxRecordBytes = DefaultLimits.MaxRecordBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultLimits.MaxDepth
	}
	if l.MaxSpoolBytes <= 0 {
		l.MaxSpoolBytes = DefaultLimits.MaxSpoolBytes
	}
	return l
}
