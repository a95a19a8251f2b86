// A runaway program ends with one line naming the core and the op, not a
// hang: a repeat of 10^12 iterations hits the instruction budget (default
// 2^27 per core, about 10 s of emulation) or the cycle budget (default
// 2^40). Absurd --threads are an error (and the emulator caps them anyway).
// RUN: rm -rf %t && mkdir -p %t
// RUN: wafer-translate --emit-bundle %s -o %t/runaway.bundle
// A repeat count past the instructions left fails as the loop starts
// (rather than after every core of a large grid ran up to the budget).
// RUN: not wafer-run run %t/runaway.bundle 2>&1 | FileCheck %s --check-prefix=REPEAT
// REPEAT: error: core (0,0): in op 'spin' repeats 1000000000000 times, more than the 134217727 instructions left of --max-instructions
// RUN: not wafer-run run %t/runaway.bundle --max-instructions 10000000000000 --max-cycles 5000 2>&1 | FileCheck %s --check-prefix=CYCLES
// CYCLES: error: core (0,0): in op 'spin' ran past cycle 5000 (--max-cycles)
// RUN: not wafer-run run %t/runaway.bundle --max-cycles 0 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: --max-cycles and --max-instructions must be positive
// RUN: not wafer-run run %t/runaway.bundle --threads 1073741824 2>&1 | FileCheck %s --check-prefix=THREADS
// THREADS: error: --threads must be between 1 and 1024, got 1073741824
core.program attributes {grid = #mesh.grid<1x2>, ops = [["spin", "map", "none"]],
    target = #mesh.target<base = "wse2">} {
  core.buffer @a[4] : f32 at 0
  core.role @all at #core.cores<x = 0:1:1, y = 0:0:1> {
    core.repeat "1000000000000" {
      core.zero @a
    }
    core.mark 0
  }
}
