// Command composecheck loads a compose file as Docker Compose does, with
// compose-go (the Compose specification's reference loader): its JSON
// schema, variable interpolation (a required variable left unset is an
// error), the references between services, volumes, secrets and
// networks, and the depends_on graph. It prints the project's services
// and exits 1 on the first problem. TestCompose (tests/dist) runs it on
// deploy/compose/compose.yaml, where no Docker CLI is needed:
//
//	go -C scripts/image run ./composecheck ../../deploy/compose/compose.yaml
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: composecheck COMPOSE_FILE")
		os.Exit(2)
	}
	file, err := filepath.Abs(os.Args[1])
	if err == nil {
		err = check(file)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "composecheck:", err)
		os.Exit(1)
	}
}

func check(file string) error {
	opts, err := cli.NewProjectOptions([]string{file},
		cli.WithWorkingDirectory(filepath.Dir(file)), cli.WithOsEnv, cli.WithDotEnv, cli.WithConsistency(true))
	if err != nil {
		return err
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		return err
	}
	fmt.Printf("%s: project %s, services %s\n", file, p.Name, strings.Join(p.ServiceNames(), ", "))
	return nil
}
