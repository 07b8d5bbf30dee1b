package intake

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

// TestOwnObjectReading pins how the product's own alert object reads since
// its embedded mapping (sender/mappings/openrecall.yaml) reads it in place
// of intake's Go reader: each case names its class, and whether the
// reading is a deliberate change ([any-sender] #35) or intake's reading
// kept. same, when set, is the payload with its members in another order
// and layout: it reads as one alert with the same id.
func TestOwnObjectReading(t *testing.T) {
	type reading struct {
		Severity    openrecall.Severity
		Service     string
		Labels      map[string]string
		Annotations map[string]string
		Timestamp   time.Time
	}
	tests := []struct {
		class, payload, same string
		want                 reading
	}{{
		class: "1: a label or annotation holding an object or array reads as its compact JSON, members sorted, <>& as sent (was: its JSON as sent); deliberate change, [any-sender] #35",
		payload: `{"title": "x", "labels": {"alertname": "A", "l": {"b": "<&>", "a": [1, "x"]}},
			"annotations": {"o": {"z": 1, "a": [ 2 ]}}}`,
		same: `{"annotations":{"o":{"a":[2],"z":1}},"labels":{"l":{"a":[1,"x"],"b":"<&>"},"alertname":"A"},"title":"x"}`,
		want: reading{Severity: openrecall.SeverityUnknown,
			Labels:      map[string]string{"alertname": "A", "l": `{"a":[1,"x"],"b":"<&>"}`},
			Annotations: map[string]string{"o": `{"a":[2],"z":1}`}},
	}, {
		class:   "2: a numeric timestamp above 1e15 reads as ParseTime reads it, microseconds (was: milliseconds, year 55,841); deliberate change, [any-sender] #35",
		payload: `{"title": "x", "timestamp": 1700000000123456}`,
		want:    reading{Severity: openrecall.SeverityUnknown, Timestamp: time.Date(2023, 11, 14, 22, 13, 20, 123456000, time.UTC)},
	}, {
		class:   "2: a numeric timestamp above 1e17 reads as ParseTime reads it, nanoseconds (was: no time); still kept as the annotation timestamp; deliberate change, [any-sender] #35",
		payload: `{"title": "x", "timestamp": 1700000000000000000}`,
		want: reading{Severity: openrecall.SeverityUnknown, Timestamp: time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC),
			Annotations: map[string]string{"timestamp": "1700000000000000000"}},
	}, {
		class:   "2: a numeric timestamp with a negative exponent is no time, as ParseTime reads it (was: 1 ms after the epoch); deliberate change, [any-sender] #35",
		payload: `{"title": "x", "timestamp": 1e-3}`,
		want:    reading{Severity: openrecall.SeverityUnknown},
	}, {
		class:   "3: a timestamp that is an object keeps an empty annotation timestamp; intake's reading kept (blank: keep)",
		payload: `{"title": "x", "timestamp": {"at": 1}}`,
		want:    reading{Severity: openrecall.SeverityUnknown, Annotations: map[string]string{"timestamp": ""}},
	}, {
		class:   "3: a timestamp beyond float64 is kept as the annotation timestamp; intake's reading kept",
		payload: `{"title": "x", "timestamp": 1e400}`,
		want:    reading{Severity: openrecall.SeverityUnknown, Annotations: map[string]string{"timestamp": "1e400"}},
	}, {
		class:   "4: a severity of only white space is no value: the labels' severity is read (was: unknown); deliberate change, [any-sender] #35",
		payload: `{"title": "x", "severity": "  ", "labels": {"severity": "high"}}`,
		want:    reading{Severity: openrecall.SeverityHigh, Labels: map[string]string{"severity": "high"}},
	}, {
		class:   "4: a service of only white space is no value: the labels' service is read (was: none); deliberate change, [any-sender] #35",
		payload: `{"title": "x", "service": " \t", "labels": {"service": "api"}}`,
		want:    reading{Severity: openrecall.SeverityUnknown, Service: "api", Labels: map[string]string{"service": "api"}},
	}}
	for _, tt := range tests {
		t.Run(tt.class, func(t *testing.T) {
			recs := readAll(t, tt.payload, Options{})
			if len(recs) != 1 || recs[0].Err != nil {
				t.Fatalf("want one alert, got %+v", recs)
			}
			a := recs[0].Alert
			if a.Sender != openrecall.SenderOwn {
				t.Fatalf("read by %q, want the product's own object", a.Sender)
			}
			got := reading{Severity: a.Severity, Service: a.Service, Labels: a.Labels, Annotations: a.Annotations, Timestamp: a.Timestamp}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reads otherwise (-want +got):\n%s", diff)
			}
			if tt.same == "" {
				return
			}
			other := readAll(t, tt.same, Options{})
			if len(other) != 1 || other[0].Err != nil || other[0].Alert.ID != a.ID || !cmp.Equal(other[0].Alert.Labels, a.Labels) || !cmp.Equal(other[0].Alert.Annotations, a.Annotations) {
				t.Errorf("reordered, it reads otherwise: %+v, want id %s and the same labels", other, a.ID)
			}
		})
	}
}
