package state

import (
	"slices"
	"strconv"

	json "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/execproto"
)

// appendSummary appends s encoded as json.Marshal encodes it, byte for
// byte, field by field: a job's summary is encoded again with every loop
// turn that changed it (three to five per job), and the reflective encoder
// was the larger half of that cost. Only the rarely present or nested
// values (annotations, exception, usage) and strings or numbers that need
// escaping or an exponent are left to json.Marshal. A field added to
// api.JobSummary must be added here too (TestAppendSummaryIsMarshal
// fails until it is).
func appendSummary(b []byte, s *Summary) ([]byte, error) {
	var err error
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, uint64(s.ID), 10)
	b = append(b, `,"userid":`...)
	b = strconv.AppendUint(b, uint64(s.UserID), 10)
	b = append(b, `,"queue":`...)
	b = appendString(b, s.Queue)
	b = append(b, `,"name":`...)
	b = appendString(b, s.Name)
	b = append(b, `,"state":`...)
	b = appendString(b, s.State.String())
	if s.Result != 0 {
		b = append(b, `,"result":`...)
		b = appendString(b, s.Result.String())
	}
	b = append(b, `,"urgency":`...)
	b = strconv.AppendInt(b, int64(s.Urgency), 10)
	b = append(b, `,"priority":`...)
	b = strconv.AppendInt(b, s.Priority, 10)
	b = append(b, `,"ntasks":`...)
	b = strconv.AppendInt(b, int64(s.NTasks), 10)
	b = append(b, `,"nnodes":`...)
	b = strconv.AppendInt(b, int64(s.NNodes), 10)
	b = append(b, `,"ncores":`...)
	b = strconv.AppendInt(b, int64(s.NCores), 10)
	b = append(b, `,"ngpus":`...)
	b = strconv.AppendInt(b, int64(s.NGPUs), 10)
	b = append(b, `,"duration":`...)
	if b, err = appendFloat(b, s.Duration); err != nil {
		return nil, err
	}
	b = append(b, `,"t_submit":`...)
	if b, err = appendFloat(b, s.TSubmit); err != nil {
		return nil, err
	}
	for _, t := range [...]struct {
		key string
		v   float64
	}{{`,"t_depend":`, s.TDepend}, {`,"t_run":`, s.TRun}, {`,"t_cleanup":`, s.TCleanup}, {`,"t_inactive":`, s.TInactive}} {
		if t.v != 0 {
			b = append(b, t.key...)
			if b, err = appendFloat(b, t.v); err != nil {
				return nil, err
			}
		}
	}
	if s.Nodelist != "" {
		b = append(b, `,"nodelist":`...)
		b = appendString(b, s.Nodelist)
	}
	if len(s.Annotations) > 0 {
		b = append(b, `,"annotations":`...)
		if b, err = appendAny(b, s.Annotations); err != nil {
			return nil, err
		}
	}
	if s.Exception != nil {
		b = append(b, `,"exception":`...)
		if b, err = appendMarshal(b, s.Exception); err != nil {
			return nil, err
		}
	}
	if s.ReturnCode != nil {
		b = append(b, `,"returncode":`...)
		b = strconv.AppendInt(b, int64(*s.ReturnCode), 10)
	}
	if s.WaitStatus != nil {
		b = append(b, `,"waitstatus":`...)
		b = strconv.AppendInt(b, int64(*s.WaitStatus), 10)
	}
	if len(s.Dependencies) > 0 {
		b = append(b, `,"dependencies":`...)
		b = appendStrings(b, s.Dependencies)
	}
	if len(s.Targets) > 0 {
		b = append(b, `,"targets":`...)
		b = appendStrings(b, s.Targets)
	}
	if s.Parent != nil {
		b = append(b, `,"parent":`...)
		b = strconv.AppendUint(b, uint64(*s.Parent), 10)
	}
	if s.Usage != nil {
		b = append(b, `,"usage":`...)
		if b, err = appendUsage(b, s.Usage); err != nil {
			return nil, err
		}
	}
	if len(s.Command) > 0 {
		b = append(b, `,"command":`...)
		b = appendStrings(b, s.Command)
	}
	if s.Cwd != "" {
		b = append(b, `,"cwd":`...)
		b = appendString(b, s.Cwd)
	}
	if s.Waits != "" {
		b = append(b, `,"waits":`...)
		b = appendString(b, s.Waits)
	}
	return append(b, '}'), nil
}

// appendUsage appends u as json.Marshal writes it (stored beside a job,
// and in its summary).
func appendUsage(b []byte, u *execproto.Usage) ([]byte, error) {
	var err error
	b = append(b, `{"user_cpu":`...)
	if b, err = appendFloat(b, u.UserCPU); err != nil {
		return nil, err
	}
	b = append(b, `,"sys_cpu":`...)
	if b, err = appendFloat(b, u.SysCPU); err != nil {
		return nil, err
	}
	b = append(b, `,"max_rss":`...)
	b = strconv.AppendInt(b, u.MaxRSS, 10)
	return append(b, '}'), nil
}

// appendString appends s as a JSON string. Strings of printable ASCII
// that json.Marshal would not escape are copied; any other is left to
// json.Marshal, so that escapes stay its own.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendFloat appends f as json.Marshal writes it: plain decimals within
// [1e-6, 1e21) (every timestamp and duration); exponents, and the error
// for NaN and infinities, are json.Marshal's own.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if a := max(f, -f); f == 0 || a >= 1e-6 && a < 1e21 {
		return strconv.AppendFloat(b, f, 'f', -1, 64), nil
	}
	return appendMarshal(b, f)
}

// appendAny appends an annotation value: the strings, numbers and
// objects of scheduler annotations by hand (object keys sorted, as
// json.Marshal sorts them), anything else by json.Marshal.
func appendAny(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return appendString(b, v), nil
	case float64:
		return appendFloat(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case map[string]any:
		if v == nil {
			return append(b, "null"...), nil
		}
		var arr [8]string
		keys := arr[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendAny(b, v[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return appendMarshal(b, v)
}

func appendMarshal(b []byte, v any) ([]byte, error) {
	m, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, m...), nil
}
