package usecase

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/openrecall/openrecall"
)

// Firing is one firing of an alert group as its page lists it: its
// membership, and, when what waited for a person about it is kept, its
// alert's title, time, labels and annotations.
type Firing struct {
	openrecall.GroupMember
	// Known is false when no record of the firing's alert is kept (it
	// did not wait for a person): only its ids are known.
	Known       bool
	Title       string
	At          time.Time
	Labels      map[string]string
	Annotations map[string]string
}

// Field names a label or an annotation of an alert.
type Field struct {
	// Annotation is set for an annotation, else it is a label.
	Annotation bool
	Name       string
}

// FieldValue is a field with its value.
type FieldValue struct {
	Field
	Value string
}

// Firings is a page of a group's firings (GroupFirings): what differs
// between them and what they share.
type Firings struct {
	Firings []Firing
	// Next is the cursor of the next page; empty on the last one.
	Next string
	// Varying are the fields whose values differ between the known
	// firings of the page (a field some lack counts), labels first, by
	// name; Shared are the others, with their one value.
	Varying []Field
	Shared  []FieldValue
}

// GroupFirings returns up to limit firings of group id after the cursor
// after ("" for the first page), head first, in the order they were
// stored, each with its alert when what waited for a person about it is
// kept, and what differs between them (DESIGN §12a). An unknown group or
// cursor wraps openrecall.ErrNotFound.
func (a *App) GroupFirings(ctx context.Context, id, after string, limit int) (Firings, error) {
	if a.Groups == nil {
		return Firings{}, errors.New("usecase: no group storage")
	}
	if limit <= 0 {
		return Firings{}, fmt.Errorf("group firings: limit %d: %w", limit, openrecall.ErrInvalid)
	}
	if _, err := a.Groups.Group(ctx, id); err != nil {
		return Firings{}, err
	}
	ms, err := a.Groups.GroupMembersAfter(ctx, id, after, limit+1)
	if err != nil {
		return Firings{}, err
	}
	var out Firings
	if len(ms) > limit {
		ms = ms[:limit]
		out.Next = ms[limit-1].AnalysisID
	}
	for _, m := range ms {
		f, err := a.firing(ctx, m)
		if err != nil {
			return Firings{}, err
		}
		out.Firings = append(out.Firings, f)
	}
	out.Varying, out.Shared = Spread(out.Firings)
	return out, nil
}

// firing is member m with its alert, read from what waited for a person
// about it.
func (a *App) firing(ctx context.Context, m openrecall.GroupMember) (Firing, error) {
	f := Firing{GroupMember: m}
	if a.Waiting == nil {
		return f, nil
	}
	w, err := a.Waiting.WaitingFor(ctx, m.AnalysisID)
	switch {
	case errors.Is(err, openrecall.ErrNotFound):
		return f, nil
	case err != nil:
		return f, fmt.Errorf("firing %s: %w", m.AnalysisID, err)
	}
	f.Known, f.Title, f.At = true, w.Title, w.Since
	if r := w.Result; r != nil {
		f.Labels, f.Annotations = r.Alert.Labels, r.Alert.Annotations
		switch {
		case r.Group != nil && !r.Group.At.IsZero():
			f.At = r.Group.At
		case !r.Alert.Timestamp.IsZero():
			f.At = r.Alert.Timestamp
		}
	}
	return f, nil
}

// Spread splits the labels and annotations of the known firings into those
// whose values differ between them (a field some lack differs) and those
// all share with one value; labels first, then annotations, each by name.
func Spread(fs []Firing) (varying []Field, shared []FieldValue) {
	values := map[Field]map[string]bool{}
	known := 0
	count := map[Field]int{}
	for _, f := range fs {
		if !f.Known {
			continue
		}
		known++
		for _, set := range []struct {
			ann bool
			m   map[string]string
		}{{false, f.Labels}, {true, f.Annotations}} {
			for k, v := range set.m {
				fd := Field{Annotation: set.ann, Name: k}
				if values[fd] == nil {
					values[fd] = map[string]bool{}
				}
				values[fd][v] = true
				count[fd]++
			}
		}
	}
	for fd, vs := range values {
		if len(vs) > 1 || count[fd] < known {
			varying = append(varying, fd)
			continue
		}
		for v := range vs {
			shared = append(shared, FieldValue{Field: fd, Value: v})
		}
	}
	order := func(x, y Field) int {
		if x.Annotation != y.Annotation {
			if x.Annotation {
				return 1
			}
			return -1
		}
		return cmp.Compare(x.Name, y.Name)
	}
	slices.SortFunc(varying, order)
	slices.SortFunc(shared, func(x, y FieldValue) int { return order(x.Field, y.Field) })
	return varying, shared
}

// Value returns f's value of field fd, and whether it has one.
func (f Firing) Value(fd Field) (string, bool) {
	m := f.Labels
	if fd.Annotation {
		m = f.Annotations
	}
	v, ok := m[fd.Name]
	return v, ok
}
