// Which phase of a lane may start (scripts/test.mjs): a lane's phases run one at a time, in their order, but a phase
// still waiting for its installs does not hold the lane up. On a fresh machine the newest host's code-server is still
// being installed (3–5 minutes, after the oldest host's) when the oldest host's in-host suite ends. Waiting for it in
// order, the lane lost its slot to a store suite and fell behind: the other phases were done at 1,470 s of a fresh
// run of 2026-12-07 and the newest host's UI suite then ran alone until 1,951 s, a core mostly idle. With the tools
// installed, every install is done long before the lane's first phase ends, and the order is the table's.

/**
 * Whether `phase` of a lane must wait for an earlier phase of its lane: one that has not started and whose installs
 * are done (`installFailure === null`). `selected` holds the run's phases in their order; `state(name)` is a phase's
 * state (`pending`, `running` or `done`). Whether the lane is busy is the caller's to check.
 */
export function waitsInLane(phase, selected, state) {
  const at = selected.indexOf(phase);
  return selected.some((p, i) => i < at && p.lane === phase.lane && state(p.name) === 'pending' && p.installFailure === null);
}
