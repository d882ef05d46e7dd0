package quantile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestOf(t *testing.T) {
	ms := func(vs ...int) []time.Duration {
		var out []time.Duration
		for _, v := range vs {
			out = append(out, time.Duration(v)*time.Millisecond)
		}
		return out
	}
	tests := []struct {
		name    string
		samples []time.Duration
		q       float64
		want    time.Duration
	}{
		{"none", nil, 0.5, 0},
		{"one", ms(7), 0.99, 7 * time.Millisecond},
		{"the median of an odd count, unsorted", ms(9, 1, 5), 0.5, 5 * time.Millisecond},
		{"the median of an even count rounds up", ms(4, 1, 3, 2), 0.5, 3 * time.Millisecond},
		{"0.99 of 30 is the highest", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30), 0.99, 30 * time.Millisecond},
		{"0.95 of 21 is the 20th", ms(21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 0.95, 20 * time.Millisecond},
		{"0 is the lowest", ms(3, 1, 2), 0, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := append([]time.Duration(nil), tt.samples...)
			assert.Equal(t, tt.want, Of(tt.samples, tt.q))
			assert.Equal(t, before, tt.samples, "the samples are not reordered")
		})
	}
}
