package property

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// caseFileProperties are the rules of the case file a prompt carries.
func caseFileProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P43_carried_case_file_equals_prompt",
			"The case file a prompt carries is written byte for byte as encoding/json would write it, and the decoded case file a request carries for in-process models is exactly what decoding its prompt gives (ParseCaseFile), whatever the alert, memories and figures hold (secrets, invalid UTF-8, JSON and HTML specials, non-finite numbers, more memories than the case file keeps); when it cannot be carried exactly it is not carried; and the local models answer a request the same whether they read the carried case file or decode the prompt.",
			"CaseInputGen", gen.CaseInputGen(), func(c gen.CaseInput) error {
				req := routing.BuildPrompt(c.Input())
				parsed, err := routing.ParseCaseFile(req.Prompt)
				if err != nil {
					return fmt.Errorf("the prompt's case file does not parse: %w", err)
				}
				if req.Case != nil && !reflect.DeepEqual(*req.Case, parsed) {
					return fmt.Errorf("carried case file %+v, the prompt's %+v", *req.Case, parsed)
				}
				// The hand-written encoder writes what encoding/json writes.
				if req.Case != nil {
					var std bytes.Buffer
					enc := json.NewEncoder(&std)
					enc.SetEscapeHTML(true)
					if err := enc.Encode(*req.Case); err != nil {
						return err
					}
					if got := string(routing.AppendCaseFileJSON(nil, *req.Case)); got != std.String() {
						return fmt.Errorf("AppendCaseFileJSON wrote\n%s\nencoding/json\n%s", got, std.String())
					}
				}
				bare := req
				bare.Case = nil
				for _, m := range []*local.Model{local.NewCheap(), local.NewStrong()} {
					for _, max := range []int{0, 400} {
						req.MaxTokens, bare.MaxTokens = max, max
						got, gotErr := m.Complete(context.Background(), req)
						want, wantErr := m.Complete(context.Background(), bare)
						if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
							return fmt.Errorf("%s (max %d tokens) answered %+v (%v) from the carried case file, %+v (%v) from the prompt", m.Name(), max, got, gotErr, want, wantErr)
						}
					}
				}
				return nil
			},
			pbt.Classify(func(c gen.CaseInput) []string {
				if routing.BuildPrompt(c.Input()).Case == nil {
					return []string{"not carried"}
				}
				return []string{"carried"}
			}),
			pbt.Cover("carried", 30),
			pbt.Cover("not carried", 5),
		),
		pbt.ForAll("P44_one_pass_answer_parse_equals_two_pass",
			"The quality gate's one-pass answer parse changes nothing: ParseAnalysis returns exactly the analysis and the error of the two-pass reference (the keys first for the presence of decision and confidence, then a strict decode), whatever the answer's shape, key case, escapes, nesting and trailing data.",
			"AnswerTextGen", gen.AnswerTextGen(), func(a gen.AnswerText) error {
				text := a.String()
				got, gotErr := routing.ParseAnalysis(text)
				want, wantErr := routing.ParseAnalysisTwoPass(text)
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
					return fmt.Errorf("ParseAnalysis(%q) = %+v, %v; the two-pass reference %+v, %v", text, got, gotErr, want, wantErr)
				}
				return nil
			},
			pbt.Classify(func(a gen.AnswerText) []string {
				if _, err := routing.ParseAnalysisTwoPass(a.String()); err != nil {
					return []string{"rejected"}
				}
				return []string{"parsed"}
			}),
			pbt.Cover("parsed", 15),
			pbt.Cover("rejected", 20),
		),
	}
}
