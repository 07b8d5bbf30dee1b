package slack

import (
	"strconv"

	"github.com/openrecall/openrecall"
)

// Block ids (and action ids) of the note modal's inputs: decision/decision
// (a static_select), note/note (multiline text), dead_end_1..dead_end_4 /
// dead_end (optional text).
const (
	BlockDecision = "decision"
	BlockNote     = "note"
	ActionDeadEnd = "dead_end"
	// MaxDeadEnds is how many dead-end inputs the modal has.
	MaxDeadEnds = 4
)

// DeadEndBlock is the block id of dead-end input i (1 to MaxDeadEnds).
func DeadEndBlock(i int) string { return "dead_end_" + strconv.Itoa(i) }

// noteDecisions are the modal's choices, in the order a person reads them.
var noteDecisions = []openrecall.Decision{openrecall.DecisionReal, openrecall.DecisionKnownBenign, openrecall.DecisionFalsePositive, openrecall.DecisionDuplicate}

type text struct {
	Type  string `json:"type"`
	Text  string `json:"text"`
	Emoji bool   `json:"emoji,omitempty"`
}

func plain(s string) *text { return &text{Type: "plain_text", Text: s} }

type option struct {
	Text  *text  `json:"text"`
	Value string `json:"value"`
}

type element struct {
	Type      string   `json:"type"`
	ActionID  string   `json:"action_id"`
	Multiline bool     `json:"multiline,omitempty"`
	MaxLength int      `json:"max_length,omitempty"`
	Options   []option `json:"options,omitempty"`
}

type block struct {
	Type     string   `json:"type"`
	BlockID  string   `json:"block_id,omitempty"`
	Optional bool     `json:"optional,omitempty"`
	Label    *text    `json:"label,omitempty"`
	Text     *text    `json:"text,omitempty"`
	Element  *element `json:"element,omitempty"`
}

// ModalView is a Block Kit modal (https://docs.slack.dev/surfaces/modals).
type ModalView struct {
	Type            string  `json:"type"`
	CallbackID      string  `json:"callback_id"`
	PrivateMetadata string  `json:"private_metadata"`
	Title           *text   `json:"title"`
	Submit          *text   `json:"submit"`
	Close           *text   `json:"close"`
	Blocks          []block `json:"blocks"`
}

// NoteModal is the note modal about m's analysis: the decision, a
// required note and up to MaxDeadEnds dead ends, m in private_metadata.
func NoteModal(m Metadata) ModalView {
	opts := make([]option, len(noteDecisions))
	for i, d := range noteDecisions {
		opts[i] = option{Text: plain(string(d)), Value: string(d)}
	}
	blocks := []block{
		{Type: "section", Text: &text{Type: "mrkdwn", Text: "Decide analysis `" + m.AnalysisID + "`: memory keeps the note and the dead ends."}},
		{Type: "input", BlockID: BlockDecision, Label: plain("Decision"), Element: &element{Type: "static_select", ActionID: BlockDecision, Options: opts}},
		{Type: "input", BlockID: BlockNote, Label: plain("Note"), Element: &element{Type: "plain_text_input", ActionID: BlockNote, Multiline: true, MaxLength: 3000}},
	}
	for i := 1; i <= MaxDeadEnds; i++ {
		blocks = append(blocks, block{Type: "input", BlockID: DeadEndBlock(i), Optional: true, Label: plain("Dead end " + strconv.Itoa(i)),
			Element: &element{Type: "plain_text_input", ActionID: ActionDeadEnd, MaxLength: 500}})
	}
	return ModalView{Type: "modal", CallbackID: CallbackNote, PrivateMetadata: m.String(),
		Title: plain("openrecall decision"), Submit: plain("Decide"), Close: plain("Cancel"), Blocks: blocks}
}

// Submission is what a person entered in the note modal.
type Submission struct {
	Metadata
	Decision string
	Note     string
	DeadEnds []string
}

// ReadSubmission reads the note modal's state.
func ReadSubmission(v View) Submission {
	s := Submission{Metadata: ParseMetadata(v.PrivateMetadata), Decision: v.Input(BlockDecision, BlockDecision), Note: v.Input(BlockNote, BlockNote)}
	for i := 1; i <= MaxDeadEnds; i++ {
		if d := v.Input(DeadEndBlock(i), ActionDeadEnd); d != "" {
			s.DeadEnds = append(s.DeadEnds, d)
		}
	}
	return s
}
