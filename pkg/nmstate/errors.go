package nmstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// InputError is a problem with the plugin's inputs. The caller reports it as
// Degraded with Reason and leaves everything deployed as it is: a typo in the
// Network config must never tear down a running handler.
type InputError struct {
	Reason string
	Err    error
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputError(reason, format string, args ...any) error {
	return &InputError{Reason: reason, Err: fmt.Errorf(format, args...)}
}

// ReasonOf returns the Reason of an *InputError in err's chain, or ReasonFailed.
func ReasonOf(err error) string {
	var e *InputError
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

// maxErrorText bounds the error text of a condition, so that a status write
// stays small however many objects failed, and an SRE reads each cause once.
// summaryRoom is what the causes may take, each with its separator: the
// rest is room for the count of what does not fit. Causes are separated by
// causeSeparator, not a newline: a condition message is one line in `oc get`
// and in alerts.
const (
	maxErrorText   = 1024
	causeSeparator = "; "
	summaryRoom    = maxErrorText - len(causeSeparator+"(and 1000 more distinct errors)")
)

// summarize is err as its distinct causes, in order of first appearance,
// separated by causeSeparator: the first object the cause hit, how many
// more it hit, and the cause in the API server's words. Causes that differ
// only in the object they name are one cause. Causes beyond maxErrorText
// bytes are counted, not shown.
func summarize(err error) string {
	type group struct {
		first, cause string
		more         int
	}
	var groups []*group
	byCause := map[string]*group{}
	for _, leaf := range leaves(err) {
		cause := rootCause(leaf).Error()
		key := namedObject.ReplaceAllString(cause, "…")
		if g, ok := byCause[key]; ok {
			g.more++
			continue
		}
		g := &group{first: strings.TrimSuffix(leaf.Error(), ": "+cause), cause: cause}
		byCause[key] = g
		groups = append(groups, g)
	}

	var lines []string
	size := 0
	for _, g := range groups {
		line := g.cause
		if g.first != g.cause {
			line = g.first + ": " + g.cause
		}
		if g.more > 0 {
			line = fmt.Sprintf("%s (and %d more like it): %s", g.first, g.more, g.cause)
		}
		line = strings.ReplaceAll(line, "\n", " ")
		if room := summaryRoom - len(causeSeparator); len(line) > room {
			line = strings.ToValidUTF8(line[:room-len("...")], "") + "..."
		}
		if size+len(line)+len(causeSeparator) > summaryRoom {
			break
		}
		lines = append(lines, line)
		size += len(line) + len(causeSeparator)
	}
	if rest := len(groups) - len(lines); rest > 0 {
		lines = append(lines, fmt.Sprintf("(and %d more distinct errors)", rest))
	}
	return strings.Join(lines, causeSeparator)
}

// namedObject is how the API server names an object in its errors, e.g.
// `daemonsets.apps "nmstate-handler"`: one cause hits many objects, each
// named in its own message.
var namedObject = regexp.MustCompile(`\S+ "(?:[^"\\]|\\.)*"`)

// leaves flattens errors.Join and multi-%w errors into their parts.
func leaves(err error) []error {
	multi, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range multi.Unwrap() {
		out = append(out, leaves(e)...)
	}
	return out
}

// rootCause is the innermost error of a %w chain: the API server's own
// words, which objects failing for one reason share.
func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// retryable reports whether a retry may fix err: any error but a bad input.
func retryable(err error) bool {
	var inputErr *InputError
	return err != nil && !errors.As(err, &inputErr)
}
