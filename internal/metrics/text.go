package metrics

import (
	"bufio"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// ContentType is the media type of the text exposition format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// WriteText writes fams in the Prometheus text exposition format 0.0.4.
func WriteText(w io.Writer, fams []Family) error {
	bw := bufio.NewWriter(w)
	var b []byte
	for _, f := range fams {
		b = b[:0]
		b = append(b, "# HELP "...)
		b = append(b, f.Name...)
		b = append(b, ' ')
		b = appendEscaped(b, f.Help, false)
		b = append(b, "\n# TYPE "...)
		b = append(b, f.Name...)
		b = append(b, ' ')
		b = append(b, f.Type...)
		b = append(b, '\n')
		for _, s := range f.Series {
			switch f.Type {
			case TypeHistogram:
				for _, bk := range s.Buckets {
					b = appendSample(b, f.Name, "_bucket", s.Labels, "le", bk.UpperBound, float64(bk.Count))
				}
				b = appendSample(b, f.Name, "_bucket", s.Labels, "le", math.Inf(1), float64(s.Count))
				b = appendSample(b, f.Name, "_sum", s.Labels, "", 0, s.Sum)
				b = appendSample(b, f.Name, "_count", s.Labels, "", 0, float64(s.Count))
			case TypeSummary:
				for _, q := range s.Quantiles {
					b = appendSample(b, f.Name, "", s.Labels, "quantile", q.Quantile, q.Value)
				}
				b = appendSample(b, f.Name, "_sum", s.Labels, "", 0, s.Sum)
				b = appendSample(b, f.Name, "_count", s.Labels, "", 0, float64(s.Count))
			default:
				b = appendSample(b, f.Name, "", s.Labels, "", 0, s.Value)
			}
		}
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// appendSample appends one sample line; extra, if not "", is a last label
// (le, quantile) whose value is the number ev.
func appendSample(b []byte, name, suffix string, labels []Label, extra string, ev, v float64) []byte {
	b = append(b, name...)
	b = append(b, suffix...)
	if len(labels) > 0 || extra != "" {
		b = append(b, '{')
		for i, l := range labels {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, l.Name...)
			b = append(b, `="`...)
			b = appendEscaped(b, l.Value, true)
			b = append(b, '"')
		}
		if extra != "" {
			if len(labels) > 0 {
				b = append(b, ',')
			}
			b = append(b, extra...)
			b = append(b, `="`...)
			b = appendFloat(b, ev)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	b = append(b, ' ')
	b = appendFloat(b, v)
	return append(b, '\n')
}

// appendEscaped escapes a backslash and a newline, and in a label value a
// double quote too.
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

func appendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "+Inf"...)
	case math.IsInf(f, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// Handler serves r's families in the text exposition format, gzipped when
// the client accepts it (Prometheus does).
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h := w.Header()
		h.Set("Content-Type", ContentType)
		h.Add("Vary", "Accept-Encoding")
		var out io.Writer = w
		if acceptsGzip(req.Header.Get("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			gz := gzip.NewWriter(w)
			defer gz.Close()
			out = gz
		}
		_ = WriteText(out, r.Gather()) // a write error is the client gone
	})
}

func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		if strings.TrimSpace(coding) != "gzip" {
			continue
		}
		q := strings.TrimSpace(params)
		return !strings.HasPrefix(q, "q=0") || strings.Trim(strings.TrimPrefix(q, "q="), "0.") != ""
	}
	return false
}
