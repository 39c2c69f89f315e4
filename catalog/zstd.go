package catalog

import (
	"io"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// The ZSTD codec the Parquet writer compresses pages with.
//
// arrow-go's keeps its level encoders in a sync.Pool, built with the
// library's default 8 MiB window: an encoder given a page over 128 KiB
// allocates a 16 MiB history (the window, twice). The pool ends up with one
// per P the writing goroutine ran on, and every GC empties it, so the next
// large page allocates and clears a fresh 16 MiB. Archival's peak memory then
// depended on scheduling and GC timing rather than on what it holds, and a
// small window paid for a new encoder each time.
//
// This codec keeps encoders on a free list the GC does not empty, one per
// compression running at once (archival runs one), at most GOMAXPROCS of
// them, and builds them with arrow-go's options and a zstdWindow window. A
// Parquet page is compressed on its own, and pages are cut at dataPageBytes,
// so a longer window finds no more matches: a page of at most zstdWindow
// compresses to the same bytes as arrow-go's codec, a larger one (a rare
// dictionary page) to a frame any ZSTD reader decodes, and the history is
// 2 MiB. Block decoding and the streaming API are arrow-go's own.
//
// arrow-go's compress.RegisterCodec exists for this: a package's init
// replaces the codec of an algorithm for the whole process.
// zstdWindow is the encoders' window: the data page size.
const zstdWindow = dataPageBytes

func init() {
	base, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		panic(err) // arrow-go registers ZSTD in its own init, which runs first
	}
	compress.RegisterCodec(compress.Codecs.Zstd, &zstdCodec{Codec: base, free: map[zstd.EncoderLevel][]*zstd.Encoder{}})
}

type zstdCodec struct {
	compress.Codec // arrow-go's: Encode (its one default-level encoder), Decode, CompressBound

	mu   sync.Mutex
	free map[zstd.EncoderLevel][]*zstd.Encoder
}

// EncodeLevel is what the page writer calls.
func (c *zstdCodec) EncodeLevel(dst, src []byte, level int) []byte {
	l := zstd.EncoderLevelFromZstd(level)
	if level == compress.DefaultCompressionLevel {
		l = zstd.SpeedDefault
	}
	enc, err := c.get(l)
	if err != nil {
		panic(err) // only an invalid option fails, and the options are constant
	}
	defer c.put(l, enc)
	return enc.EncodeAll(src, dst[:0])
}

func (c *zstdCodec) get(l zstd.EncoderLevel) (*zstd.Encoder, error) {
	c.mu.Lock()
	if n := len(c.free[l]); n > 0 {
		enc := c.free[l][n-1]
		c.free[l] = c.free[l][:n-1]
		c.mu.Unlock()
		return enc, nil
	}
	c.mu.Unlock()
	// arrow-go's options (compress/zstd.go) and a window of zstdWindow.
	return zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(l),
		zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true), zstd.WithWindowSize(zstdWindow))
}

func (c *zstdCodec) put(l zstd.EncoderLevel, enc *zstd.Encoder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.free[l]) < runtime.GOMAXPROCS(0) {
		c.free[l] = append(c.free[l], enc)
	}
}

// DecodeWithError and the streaming API are arrow-go's; the embedded Codec
// interface does not carry them.

func (c *zstdCodec) DecodeWithError(dst, src []byte) ([]byte, error) {
	return compress.Decode(c.Codec, dst, src)
}

func (c *zstdCodec) NewReader(r io.Reader) io.ReadCloser {
	return c.Codec.(compress.StreamingCodec).NewReader(r)
}

func (c *zstdCodec) NewWriter(w io.Writer) io.WriteCloser {
	return c.Codec.(compress.StreamingCodec).NewWriter(w)
}

func (c *zstdCodec) NewWriterLevel(w io.Writer, level int) (io.WriteCloser, error) {
	return c.Codec.(compress.StreamingCodec).NewWriterLevel(w, level)
}
