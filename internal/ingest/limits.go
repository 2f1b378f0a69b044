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
	// MaxInflateRatio bounds a compressed file's decompressed bytes to this many times the
	// compressed bytes read so far, once past InflateFloorBytes (real sample files inflate 3–20×;
	// a decompression bomb, 1,000× for gzip and far more for zstd). Blank lines count. Default 200.
	MaxInflateRatio int64
	// MaxInflatedBytes bounds a compressed file's decompressed size whatever its ratio.
	// Default 64 GiB.
	MaxInflatedBytes int64
}

// InflateFloorBytes is what any compressed file may inflate to before MaxInflateRatio applies:
// the ratio of a file's first blocks says little.
const InflateFloorBytes = 64 << 20

// DefaultLimits are the limits ReadSamples and ReadDataset use unless told otherwise
// (Options.Limits). reach reads REACH_MAX_LINE_BYTES into MaxRecordBytes.
var DefaultLimits = Limits{MaxRecordBytes: 64 << 20, MaxDepth: 128, MaxSpoolBytes: 16 << 30,
	MaxInflateRatio: 200, MaxInflatedBytes: 64 << 30}

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
	if l.MaxInflateRatio <= 0 {
		l.MaxInflateRatio = DefaultLimits.MaxInflateRatio
	}
	if l.MaxInflatedBytes <= 0 {
		l.MaxInflatedBytes = DefaultLimits.MaxInflatedBytes
	}
	return l
}
