package main

import (
	"errors"
	"flag"
	"fmt"
)

// errHelp: -h / --help was given; the usage is printed and the exit status is 0.
var errHelp = errors.New("help requested")

// parseArgs parses flags, which may come before or after the positional
// arguments, and returns the positional arguments. More than maxArgs of them
// is a usage error.
func parseArgs(fs *flag.FlagSet, args []string, maxArgs int) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) > maxArgs {
		return nil, fmt.Errorf("%w: %s: unexpected argument %q", errUsage, fs.Name(), pos[maxArgs])
	}
	return pos, nil
}
