#!/usr/bin/env python3
"""python_step.py — what driving srd from Python costs (bench/README.md, "Python").

1. The overhead of one Model.step() call over the same steps taken in one C loop
   (srd_run_steps(n)), for a model whose step is tiny: a point mass falling freely (3 DOFs).
   Also a typical control-loop call sequence: set_input, step, probe.
2. Environment steps per second of srd.gym.SnakeGoal (10 model steps each), one environment
   and VectorEnv of N on this machine's cores.

    PYTHONPATH=python SRD_LIBRARY=build/libsrd.so python3 bench/python_step.py
"""
import ctypes
import os
import tempfile
import time

import numpy as np

import srd
import srd.gym
from srd import _lib

POINT = """
input push = 0 N in -10 N..10 N;
body ball { position = (0, 0, 1) m; mass = 0.1 kg; }
load ball.node = (push, 0 N, 0 N);
gravity = (0, 0, -9.81) m/s^2;
simulate { method = implicit_euler; dt = 1 ms; duration = 1 s; probe z = ball.node.z every 1 ms; }
"""


def best_of(fn, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def overhead(n=20000):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "point.srd")
        with open(path, "w") as f:
            f.write(POINT)
        m = srd.Model(path)
        c_loop = best_of(lambda: _lib.lib.srd_run_steps(m._ptr, n)) / n

        def python_loop():
            for _ in range(n):
                m.step()

        def control_loop():
            for _ in range(n):
                m.set_input("push", 0.0)
                m.step()
                m.probe("z")

        py = best_of(python_loop) / n
        control = best_of(control_loop) / n
    print("point mass (3 DOFs): a step in the C loop %.2f us; Model.step() %.2f us, overhead %.2f us per call"
          % (c_loop * 1e6, py * 1e6, (py - c_loop) * 1e6))
    print("  set_input + step + probe: %.2f us, %.2f us on top of the step" % (control * 1e6, (control - c_loop) * 1e6))


def env_rate(n_envs, steps=200):
    if n_envs == 1:
        env = srd.gym.SnakeGoal(max_steps=10 ** 9)
        env.reset(seed=0)
        action = np.array([2.0])
        start = time.perf_counter()
        for _ in range(steps):
            env.step(action)
        return steps / (time.perf_counter() - start)
    vec = srd.gym.VectorEnv(lambda: srd.gym.SnakeGoal(max_steps=10 ** 9), n_envs)
    vec.reset(seed=0)
    actions = np.full((n_envs, 1), 2.0)
    start = time.perf_counter()
    for _ in range(steps):
        vec.step(actions)
    return n_envs * steps / (time.perf_counter() - start)


def main():
    print("srd %s, %d cores" % (srd.__version__, os.cpu_count()))
    overhead()
    m = srd.Model(os.path.join(srd.gym.EXAMPLES, "snake_goal.srd"))
    m.set_input("turn", 2.0)
    per_step = best_of(lambda: m.step(200), 3) / 200
    print("snake (21 nodes, 83 DOFs): one model step %.3f ms in the C loop" % (per_step * 1e3))
    for n in (1, 2, 4, 8):
        print("SnakeGoal, %d environment%s: %6.0f environment steps/s (10 model steps each)"
              % (n, "s" if n > 1 else "", env_rate(n)))


if __name__ == "__main__":
    main()
