#!/usr/bin/env python3
"""snake_policies.py — runs the SnakeGoal environment (srd.gym) with a random policy and with a
simple scripted one (turn toward the goal's bearing), and prints how often each reaches its goal,
its mean return and the environment steps per second.

    PYTHONPATH=python python3 python/examples/snake_policies.py [--episodes N] [--seed S]
"""
import argparse
import time

import numpy as np

import srd.gym


def run(env, policy, episodes, seed):
    reached, returns, steps = 0, [], 0
    start = time.perf_counter()
    for episode in range(episodes):
        obs, _ = env.reset(seed=seed + episode)
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(policy(env, obs))
            total += reward
            steps += 1
            done = terminated or truncated
        reached += terminated
        returns.append(total)
    return reached, float(np.mean(returns)), steps / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    env = srd.gym.SnakeGoal()
    policies = {
        "random": lambda env, obs: env.action_space.sample(),
        "scripted": lambda env, obs: srd.gym.steer_toward_goal(obs),
    }
    print("SnakeGoal: %d episodes each, up to %d steps of %.2f s" % (args.episodes, env.max_steps, env.control_period))
    for name, policy in policies.items():
        reached, mean_return, rate = run(env, policy, args.episodes, args.seed)
        print("  %-8s reached %2d of %d goals, mean return %6.2f, %5.0f environment steps/s"
              % (name, reached, args.episodes, mean_return, rate))


if __name__ == "__main__":
    main()
