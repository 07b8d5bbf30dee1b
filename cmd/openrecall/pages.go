package main

import (
	"fmt"

	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/notify"
)

// notifyRoute returns the configuration's notify route, nil when it has
// none. It reads the route with the receivers' names alone: no secret is
// read, none need be set (analyze and eval only count what it would send).
func notifyRoute(cfg config.Config) (*notify.Route, error) {
	root, err := notify.ReadRoute(&cfg.Notify)
	if err != nil {
		return nil, fmt.Errorf("config: notify: %w", err)
	}
	return root, nil
}

// pagesRoute returns the route tree analyze counts pages with, and its
// name for people: the configuration's notify route when it has one, else
// notify.DefaultPagingRoute.
func pagesRoute(cfg config.Config) (*notify.Route, string, error) {
	root, err := notifyRoute(cfg)
	switch {
	case err != nil:
		return nil, "", err
	case root != nil:
		return root, "the configuration's notify route", nil
	}
	return notify.DefaultPagingRoute(), `the default paging route (decision=~"escalated|real")`, nil
}
