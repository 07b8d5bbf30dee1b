package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is the release version, set at build time with
// -ldflags "-X main.version=v1.2.3" (the Makefile does). Without it the
// module version from the build information is used.
var version string

// buildVersion describes the running binary.
type buildVersion struct {
	Version   string `json:"version"`
	GoVersion string `json:"go_version"`
	Revision  string `json:"vcs_revision,omitempty"`
	Time      string `json:"vcs_time,omitempty"`
	Modified  bool   `json:"vcs_modified,omitempty"`
}

// readVersion reads the version from -ldflags, then the build information.
func readVersion() buildVersion {
	v := buildVersion{Version: version}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if v.Version == "" {
			v.Version = "unknown"
		}
		return v
	}
	v.GoVersion = bi.GoVersion
	if v.Version == "" {
		v.Version = bi.Main.Version
	}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String is the one-line form: version, Go version, and the revision when
// the build recorded one.
func (v buildVersion) String() string {
	parts := []string{v.GoVersion}
	if v.Revision != "" {
		rev := v.Revision
		if v.Modified {
			rev += " (modified)"
		}
		parts = append(parts, "revision "+rev)
	}
	return v.Version + " (" + strings.Join(parts, ", ") + ")"
}

// versionOptions are the flags of version.
type versionOptions struct {
	output string
}

func newVersionCmd(a *app) *cobra.Command {
	opts := &versionOptions{}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, the Go version and the source revision",
		Example: `  openrecall version
  openrecall version -o json
  openrecall --version`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(opts.output); err != nil {
				return err
			}
			return versionRun(a, opts)
		},
	}
	addOutputFlag(cmd, &opts.output)
	return cmd
}

func versionRun(a *app, opts *versionOptions) error {
	v := readVersion()
	if opts.output != outputTable {
		return writeJSON(a.out, opts.output, v)
	}
	_, err := fmt.Fprintf(a.out, "openrecall %s\n", v)
	return err
}
