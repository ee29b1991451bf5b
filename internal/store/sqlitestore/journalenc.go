package sqlitestore

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

// appendBatch appends the JSON of a journalable batch to dst: the bytes
// json.Marshal writes for it, without reflection (a journal append is on
// every settling call's path, and reflection was most of its cost). A
// value this encoder does not write itself (a string to escape, a time
// json.Marshal refuses) goes through encoding/json, so the bytes are
// always the standard encoding's and readSegment reads them as before.
func appendBatch(dst []byte, sts []backend.Settlement) ([]byte, error) {
	dst = append(dst, '[')
	for i, st := range sts {
		if i > 0 {
			dst = append(dst, ',')
		}
		e := &st.Entry
		dst = append(dst, `{"ReservationID":`...)
		dst = appendString(dst, st.ReservationID)
		dst = append(dst, `,"Entry":{"ID":`...)
		dst = appendString(dst, e.ID)
		dst = append(dst, `,"Time":`...)
		var err error
		if dst, err = appendTime(dst, e.Time); err != nil {
			return nil, err
		}
		for _, f := range [...]struct {
			name string
			v    string
		}{
			{`,"Principal":`, e.Principal}, {`,"Account":`, e.Account}, {`,"Session":`, e.Session},
			{`,"ALeg":`, e.ALeg}, {`,"BLeg":`, e.BLeg}, {`,"Kind":`, e.Kind}, {`,"Route":`, e.Route},
			{`,"Provider":`, e.Provider}, {`,"Model":`, e.Model},
		} {
			dst = append(dst, f.name...)
			dst = appendString(dst, f.v)
		}
		for _, f := range [...]struct {
			name string
			v    int64
		}{
			{`,"InputTokens":`, e.InputTokens}, {`,"OutputTokens":`, e.OutputTokens},
			{`,"CacheReadTokens":`, e.CacheReadTokens}, {`,"CacheWriteTokens":`, e.CacheWriteTokens},
			{`,"CostMicros":`, e.CostMicros}, {`,"Status":`, int64(e.Status)}, {`,"DurationMS":`, e.DurationMS},
		} {
			dst = append(dst, f.name...)
			dst = strconv.AppendInt(dst, f.v, 10)
		}
		dst = append(dst, `},"Adjust":`...)
		switch {
		case st.Adjust == nil:
			dst = append(dst, "null"...)
		case len(st.Adjust) == 0:
			dst = append(dst, "[]"...)
		default:
			b, err := json.Marshal(st.Adjust)
			if err != nil {
				return nil, err
			}
			dst = append(dst, b...)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

// appendString writes s as encoding/json does: printable ASCII that needs
// no escape (json escapes <, > and & for HTML) as it is, anything else
// through encoding/json.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always marshals
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// appendTime writes t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds, quoted); a time not in UTC (whose offset MarshalJSON may
// refuse) or with a year outside 0…9999 (which it refuses) goes through it.
func appendTime(dst []byte, t time.Time) ([]byte, error) {
	if _, off := t.Zone(); off != 0 || t.Year() < 0 || t.Year() > 9999 {
		b, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		return append(dst, b...), nil
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"'), nil
}
