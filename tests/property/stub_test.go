package property

import (
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

func pipelineProperties() []pbt.Property          { return nil }
func checkWorkflowLiveness(c gen.LivenessCase) error { return nil }
