"""The Flight Plan document model: the typed, frozen views of a SKILL.md's
`aileron` block (`FlightPlan`, steps, inputs, outputs, trust contracts, the
lock), the lenient reader that builds them from frontmatter data, bindings and
template tokens, the step graph, and the curated tool catalog. It imports
`flightdeck.documents` and, of flightplan, the error class at the top and the
registry's image-reference parser (lazily, for a lock's pinned image); never
lint, signing, the store, or the freeze and verify pipelines. Import-free: its
names are public through `flightdeck.flightplan`."""
