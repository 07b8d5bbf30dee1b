package property

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/usecase"
)

// creationProperties are the rules for creating an exception, whatever the
// door (DESIGN §6b).
func creationProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P157_exception_created_only_within_the_rules_at_every_door",
			"Whatever door a request to create an exception comes through — written directly (the CLI's exception add, the API, the cockpit's form), approved from a proposal (the CLI, the API, the cockpit, Slack, eval) or imported (memory import, the API) — an exception is stored exactly when the request breaks none of the creation rules stated independently of the product: a person approves it (a blank analyst is nobody), it names a rule, and a service where a person writes one (written directly or imported: a blank service is no wildcard; an approved proposal keeps the identity of the alerts it was made for, matched exactly, no service included), its expiry is in the future and within the configured cap, its decision is benign, its ceiling a known severity, its match fields have names and values, a security detection's exception (an attack pattern) has at least one match field, and an import is of an exception nobody revoked. A refused request is answered as invalid (an import's as refused) and stores nothing; an admitted one is stored once with the person, the identity, the match fields and the expiry asked.",
			"CreationGen", gen.CreationGen(), checkCreation,
			pbt.Expensive(2),
			pbt.Classify(func(c gen.Creation) []string {
				labels := []string{gen.DoorNames[c.Door]}
				v := c.Violations()
				if len(v) == 0 {
					return append(labels, "admissible")
				}
				if len(v) == 1 {
					labels = append(labels, "only "+v[0])
				}
				return labels
			}),
			pbt.Cover("admissible", 15),
			pbt.PinFunc("every door, an admissible request and each rule broken alone", func() error {
				for door := range gen.DoorNames {
					base := gen.Creation{Door: door, Rule: 1, Service: 2, Attack: 1, Match: 1, Analyst: 2, Expiry: 3, Cap: 1, Decision: 0, Ceiling: 0}
					cases := []gen.Creation{base}
					for _, change := range []func(*gen.Creation){
						func(c *gen.Creation) { c.Analyst = 0 }, func(c *gen.Creation) { c.Analyst = 1 },
						func(c *gen.Creation) { c.Rule = 0 }, func(c *gen.Creation) { c.Service = 0 }, func(c *gen.Creation) { c.Service = 1 },
						func(c *gen.Creation) { c.Expiry = 0 }, func(c *gen.Creation) { c.Expiry = 5 }, func(c *gen.Creation) { c.Cap, c.Expiry = 0, 7 },
						func(c *gen.Creation) { c.Decision = 3 }, func(c *gen.Creation) { c.Ceiling = 2 },
						func(c *gen.Creation) { c.Match = 3 }, func(c *gen.Creation) { c.Match = 4 }, func(c *gen.Creation) { c.Match = 0 },
						func(c *gen.Creation) { c.Revoked = true },
					} {
						c := base
						change(&c)
						cases = append(cases, c)
					}
					for _, c := range cases {
						if err := checkCreation(c); err != nil {
							return fmt.Errorf("%v (%+v)", err, c)
						}
					}
				}
				return nil
			}),
		),
	}
}

// checkCreation sends c through its door on a fresh store and compares
// what was stored with the rules.
func checkCreation(c gen.Creation) error {
	ctx := context.Background()
	loc, done, err := scratchLocation("creation")
	if err != nil {
		return err
	}
	defer done()
	st, err := memory.Open(ctx, loc, memory.Options{Now: fixedNow})
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	defer func() { _ = st.Close() }()
	{
		now := fixedClock()
		root, err := productRoot(st, nil, func() time.Time { return now })
		if err != nil {
			return err
		}
		app := *root.UseCases
		app.ExceptionRules = usecase.ExceptionRules{MaxExpiry: c.CapDuration()}
		var refused error
		switch c.Door {
		case gen.DoorAdd:
			_, refused = app.AddException(ctx, usecase.AddRequest{
				Identity: c.Identity(), DNA: c.DNA(), Match: c.MatchFields(), MaxSeverity: c.CeilingOf(), Decision: c.DecisionOf(),
				Expiry: c.ExpiryDuration(), Analyst: c.AnalystName(), Note: "maintenance",
			})
		case gen.DoorApprove:
			// The proposal as a run stores it (memory's recordProposalsTx),
			// holding whatever the request holds: the rules hold of a
			// proposal as of any request.
			if err := storeProposal(ctx, loc, c, now); err != nil {
				return err
			}
			_, refused = app.ApproveProposal(ctx, usecase.ApproveRequest{ProposalID: "prop-1", Analyst: c.AnalystName(), Expiry: c.ExpiryDuration(), Note: "expected"})
		case gen.DoorImport:
			e := openrecall.Exception{ID: "exc-imported", Identity: c.Identity(), DNA: c.DNA(), Match: c.MatchFields(), Decision: c.DecisionOf(),
				MaxSeverity: c.CeilingOf(), ExpiresAt: now.Add(c.ExpiryDuration()), CreatedAt: now.Add(-time.Hour), Analyst: c.AnalystName()}
			if c.Revoked {
				e.RevokedAt, e.RevokedBy, e.RevokeReason = now.Add(-time.Minute), "carol", "done"
			}
			var imp usecase.ImportedExceptions
			imp, refused = app.ImportExceptions(ctx, []openrecall.Exception{e}, c.AnalystName())
			if refused == nil && len(imp.Refused) > 0 {
				refused = imp.Refused[0].Err
			}
		}
		list, err := st.Exceptions(ctx)
		if err != nil {
			return fmt.Errorf("setup: %v", err)
		}
		broken := c.Violations()
		if len(broken) > 0 {
			if len(list) != 0 {
				return fmt.Errorf("stored: through %s an exception breaking %s was stored: %+v", gen.DoorNames[c.Door], strings.Join(broken, ", "), list[0])
			}
			if refused == nil || !errors.Is(refused, openrecall.ErrInvalid) {
				return fmt.Errorf("answer: through %s a request breaking %s was answered %v, want invalid", gen.DoorNames[c.Door], strings.Join(broken, ", "), refused)
			}
			return nil
		}
		if refused != nil {
			return fmt.Errorf("refused: through %s an admissible request was refused: %v", gen.DoorNames[c.Door], refused)
		}
		if len(list) != 1 {
			return fmt.Errorf("stored: through %s an admissible request stored %d exceptions", gen.DoorNames[c.Door], len(list))
		}
		e := list[0]
		want := now.Add(c.EffectiveExpiry())
		if e.Analyst != c.AnalystName() || e.Identity != c.Identity() || !maps.Equal(e.Match, c.MatchFields()) || !e.ExpiresAt.Equal(want) {
			return fmt.Errorf("stored: through %s the exception stored is %s, %s, match %v, expires %s; asked %s, %s, match %v, expires %s",
				gen.DoorNames[c.Door], e.Analyst, e.Identity, e.Match, e.ExpiresAt, c.AnalystName(), c.Identity(), c.MatchFields(), want)
		}
		return nil
	}
}

// storeProposal writes proposal prop-1 of c's identity, DNA, match fields,
// decision and ceiling into the store at loc, as a run would.
func storeProposal(ctx context.Context, loc string, c gen.Creation, now time.Time) error {
	raw, err := rawInbox(loc)
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	defer func() { _ = raw.Close() }()
	match, err := json.Marshal(c.MatchFields())
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	if c.MatchFields() == nil {
		match = []byte("{}")
	}
	id := c.Identity()
	_, err = raw.ExecContext(ctx, `INSERT INTO exception_proposals (id, rule, service, dna, match, decision, max_severity, expiry_ns, supporting, alert_id, batch, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		"prop-1", id.Rule, id.Service, c.DNA().String(), string(match), string(c.DecisionOf()), string(c.CeilingOf()),
		int64(gen.ProposalExpiry), `["m-1","m-2","m-3","m-4","m-5"]`, "det-1", "run-1", now.UnixNano())
	if err != nil {
		return fmt.Errorf("setup: store the proposal: %v", err)
	}
	return nil
}
