package nmstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Error is a problem with the plugin's inputs. The caller reports it as
// Degraded with Reason and leaves everything deployed as it is: a typo in the
// Network config must never tear down a running handler.
type Error struct {
	Reason string
	Err    error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func inputError(reason, format string, args ...any) error {
	return &Error{Reason: reason, Err: fmt.Errorf(format, args...)}
}

// ReasonOf returns the Reason of an *Error in err's chain, or ReasonFailed.
func ReasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ReasonFailed
}

// quote renders a user-supplied value for a message, cut short so that a
// megabyte of garbage in the config cannot become a megabyte condition.
func quote(v any) string {
	const max = 64
	var s string
	if str, ok := v.(string); ok {
		s = strconv.Quote(str)
	} else if b, err := json.Marshal(v); err == nil {
		s = string(b)
	} else {
		s = fmt.Sprintf("%v", v)
	}
	if len(s) > max {
		s = s[:max] + fmt.Sprintf("...(%d bytes)", len(s))
	}
	return s
}
