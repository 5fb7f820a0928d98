/**
 * The order `npm test` starts the phases of its workbench lane in (scripts/host/laneOrder.mjs): the table's, but never
 * waiting for a phase whose host is still being installed while a later phase of the lane could run.
 */
import { strict as assert } from 'node:assert';
import { waitsInLane, type LanePhase } from '../../../scripts/host/laneOrder.mjs';

const lane = 'workbench';
const phase = (name: string, installFailure: string | null | undefined, inLane = true): LanePhase => ({
  name,
  installFailure,
  ...(inLane ? { lane } : {}),
});

describe('npm test: the workbench lane', () => {
  it('starts its phases in their order when every install is done', () => {
    const selected = [phase('integration-a', null), phase('integration-b', null), phase('ui-a', null), phase('ui-b', null)];
    const states = new Map(selected.map((p) => [p.name, 'pending']));
    const state = (name: string): string | undefined => states.get(name);
    assert.deepEqual(
      selected.map((p) => waitsInLane(p, selected, state)),
      [false, true, true, true],
    );
    states.set('integration-a', 'done');
    assert.deepEqual(
      selected.map((p) => waitsInLane(p, selected, state)),
      [false, false, true, true],
    );
  });

  it('lets a later phase go first while an earlier one waits for its installs, and keeps the order after it', () => {
    const selected = [phase('integration-a', null), phase('integration-b', undefined), phase('ui-a', null), phase('ui-b', undefined)];
    const states = new Map(selected.map((p) => [p.name, 'pending']));
    states.set('integration-a', 'done');
    const state = (name: string): string | undefined => states.get(name);
    // integration-b's host is still being installed: ui-a, whose host is there, may start.
    assert.equal(waitsInLane(selected[2]!, selected, state), false);
    // Once integration-b's installs are done, it goes before every later phase of the lane.
    selected[1]!.installFailure = null;
    assert.equal(waitsInLane(selected[2]!, selected, state), true);
    assert.equal(waitsInLane(selected[3]!, selected, state), true);
    assert.equal(waitsInLane(selected[1]!, selected, state), false);
  });

  it('is held only by pending phases of its own lane', () => {
    const selected = [phase('unit', null, false), phase('integration-a', null), phase('ui-a', null)];
    const states = new Map([
      ['unit', 'pending'],
      ['integration-a', 'running'],
      ['ui-a', 'pending'],
    ]);
    // A running phase is the lane's busy flag's to say (the caller's); a pending phase outside the lane never holds it.
    assert.equal(
      waitsInLane(selected[2]!, selected, (name) => states.get(name)),
      false,
    );
    assert.equal(
      waitsInLane(selected[1]!, selected, (name) => states.get(name)),
      false,
    );
  });
});
