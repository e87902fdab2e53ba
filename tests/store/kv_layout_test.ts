/**
 * The KV key layout: the default layout's keys are the ones existing databases hold, and a prefixed
 * layout puts every key under its prefix and takes its keys apart the same way.
 */
import assert from "node:assert/strict";
import {
  chunkIndex,
  DEFAULT_LAYOUT,
  KvLayout,
  namespaceLayout,
  NAMESPACES_VERSION,
  recordKeys,
  recordRange,
} from "../../lib/store/kv/layout.ts";

Deno.test("kv layout: the default layout builds the keys existing databases hold", () => {
  const l = DEFAULT_LAYOUT;
  assert.deepEqual(l.meta("s"), ["m", "s"]);
  assert.deepEqual(l.task("g1", "a"), ["t", "g1", "a"]);
  assert.deepEqual(l.task("g1", ""), ["t", "g1", ""]);
  assert.deepEqual(l.log("g1", 7), ["l", "g1", 7]);
  assert.deepEqual(l.work("10000001"), ["w", "10000001"]);
  assert.deepEqual(l.worksVersion, ["wv"]);
  assert.deepEqual(l.blob("b1"), ["b", "b1"]);
  assert.deepEqual(l.progress("p"), ["p", "p"]);
  assert.deepEqual(l.storeVersion, ["v"]);
  assert.deepEqual(l.marker("g", "g1"), ["gc", "g", "g1"]);
  assert.deepEqual(
    [l.metas(), l.tasks("g1"), l.logs("g1"), l.works(), l.progresses(), l.markers()],
    [{ prefix: ["m"] }, { prefix: ["t", "g1"] }, { prefix: ["l", "g1"] }, { prefix: ["w"] }, {
      prefix: ["p"],
    }, {
      prefix: ["gc"],
    }],
  );
  assert.deepEqual(l.garbage("g", "g1"), [{ prefix: ["t", "g1"] }, { prefix: ["l", "g1"] }]);
  assert.deepEqual(l.garbage("b", "b1"), [recordRange(["b", "b1"])]);
});

Deno.test("kv layout: a prefixed layout puts every key under the prefix and reads its keys back", () => {
  const l = new KvLayout(["ns", "team"]);
  const keys = [
    l.meta("s"),
    l.task("g1", "a"),
    l.log("g1", 7),
    l.work("w"),
    l.worksVersion,
    l.blob("b1"),
    l.progress("p"),
    l.storeVersion,
    l.marker("b", "b1"),
  ];
  for (const key of keys) assert.deepEqual(key.slice(0, 2), ["ns", "team"], JSON.stringify(key));
  for (const selector of [l.metas(), l.tasks("g1"), l.logs("g1"), l.works(), l.progresses(), l.markers()]) {
    assert.deepEqual(selector.prefix.slice(0, 2), ["ns", "team"]);
  }
  assert.equal(l.sessionOf(l.meta("s")), "s");
  assert.deepEqual(l.taskOf(l.task("g1", "a")), { gen: "g1", id: "a", chunk: 0 });
  assert.deepEqual(l.taskOf([...l.task("g1", "a"), 2]), { gen: "g1", id: "a", chunk: 2 });
  assert.equal(l.seqOf(l.log("g1", 7)), 7);
  assert.equal(l.workOf(l.work("w")), "w");
  assert.equal(l.projectOf(l.progress("p")), "p");
  assert.equal(l.projectOf([...l.progress("p"), 1]), undefined, "a chunk's key names no project");
  assert.deepEqual(l.markerOf(l.marker("b", "b1")), { kind: "b", id: "b1" });
  assert.equal(l.markerOf([...l.markers().prefix, "x", "y"]), undefined);
  assert.equal(l.taskKeyLength, l.task("g", "a").length);
  assert.equal(l.workKeyLength, l.work("w").length);
});

Deno.test('kv layout: namespace default keeps today\'s keys, another namespace NAME lives under ["n", NAME]', () => {
  assert.equal(namespaceLayout("default"), DEFAULT_LAYOUT);
  assert.deepEqual(DEFAULT_LAYOUT.changeCounters, [["v"]]);
  const l = namespaceLayout("team.a");
  assert.deepEqual(l.meta("s"), ["n", "team.a", "m", "s"]);
  assert.deepEqual(l.work("w"), ["n", "team.a", "w", "w"]);
  assert.deepEqual(l.progress("p"), ["n", "team.a", "p", "p"]);
  assert.deepEqual(l.historyEntry("line", 3), ["n", "team.a", "h", "line", 3]);
  // Every change there also counts in ["nv"], which one watch of the whole store sees.
  assert.deepEqual(l.changeCounters, [["n", "team.a", "v"], NAMESPACES_VERSION]);
  assert.deepEqual(NAMESPACES_VERSION, ["nv"]);
});

Deno.test("kv layout: a record's chunks sit right under its key", () => {
  const key = ["p", "x"];
  assert.deepEqual(recordKeys(key, 3), [["p", "x"], ["p", "x", 1], ["p", "x", 2]]);
  assert.equal(chunkIndex(key, ["p", "x"]), 0);
  assert.equal(chunkIndex(key, ["p", "x", 2]), 2);
  assert.equal(chunkIndex(key, ["p", "x", "y"]), -1);
  assert.equal(chunkIndex(key, ["p", "y", 1]), undefined);
});
