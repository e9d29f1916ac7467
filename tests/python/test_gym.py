"""test_gym.py — srd.gym: the Gymnasium API (with or without the gymnasium package), seeding,
the snake's steering physics, a scripted policy that reaches its goals where a random one
mostly does not, and a vector of environments equal to the environments run one by one."""
import math

import numpy as np
import pytest

import srd
import srd.gym
from conftest import example


def heading_after(turn, seconds=10.0):
    m = srd.Model(example("snake_goal.srd"))
    m.set_input("turn", turn)
    m.run(seconds)
    d = m.probe("head") - m.probe("tail")
    return math.degrees(math.atan2(d[1], d[0]))


def test_steering_turns_the_snake_by_mirror_angles():
    straight, right, left = heading_after(0.0), heading_after(4.0), heading_after(-4.0)
    assert abs(straight) < 1.0, "no turn: the snake keeps swimming along +x (%.2f deg)" % straight
    assert right < -10 and left > 10, "turn = +-4 /m: clockwise and anticlockwise (%.1f, %.1f deg)" % (right, left)
    assert abs(right + left) < 1.0, "mirror images to within the wave's own asymmetry (1 degree)"


def test_gymnasium_api():
    env = srd.gym.SnakeGoal()
    if srd.gym.HAS_GYMNASIUM:
        import gymnasium
        assert isinstance(env, gymnasium.Env)
    obs, info = env.reset(seed=1)
    assert obs.shape == env.observation_space.shape and obs.dtype == np.float32 and info["t"] == 0
    assert env.action_space.shape == (1,) and env.action_space.contains(env.action_space.sample())
    obs, reward, terminated, truncated, info = env.step(np.array([2.0], dtype=np.float32))
    assert isinstance(reward, float) and isinstance(terminated, bool) and isinstance(truncated, bool)
    assert info["t"] == pytest.approx(env.control_period)


def test_seeding_repeats_episodes():
    def episode(seed):
        env = srd.gym.SnakeGoal()
        obs, _ = env.reset(seed=seed)
        seen = [obs]
        for k in range(5):
            seen.append(env.step(np.array([(-1) ** k * 3.0]))[0])
        return np.array(seen), env.goal
    a, goal_a = episode(7)
    b, goal_b = episode(7)
    c, goal_c = episode(8)
    assert np.array_equal(goal_a, goal_b) and np.array_equal(a, b), "the same seed, the same episode, bit for bit"
    assert not np.array_equal(goal_a, goal_c)


def run_policy(policy, seeds):
    env = srd.gym.SnakeGoal()
    reached, returns = 0, []
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(policy(env, obs))
            total += reward
            done = terminated or truncated
        reached += terminated
        returns.append(total)
    return reached, float(np.mean(returns))


def test_scripted_policy_reaches_the_goals():
    seeds = range(5)
    scripted = run_policy(lambda env, obs: srd.gym.steer_toward_goal(obs), seeds)
    random = run_policy(lambda env, obs: env.action_space.sample(), seeds)
    assert scripted[0] == 5, "steering toward the goal reaches every goal (%d of 5)" % scripted[0]
    assert scripted[1] > random[1] + 3, "and earns more than random turns (%.2f against %.2f)" % (scripted[1],
                                                                                               random[1])


def test_vector_env_equals_the_environments_one_by_one():
    vec = srd.gym.VectorEnv(srd.gym.SnakeGoal, 3, threads=2)
    singles = [srd.gym.SnakeGoal() for _ in range(3)]
    obs, _ = vec.reset(seed=10)
    one = np.stack([env.reset(seed=10 + k)[0] for k, env in enumerate(singles)])
    assert np.array_equal(obs, one)
    actions = np.array([[-5.0], [0.0], [5.0]])
    for _ in range(4):
        obs, rewards, terminated, truncated, _ = vec.step(actions)
        results = [env.step(a) for env, a in zip(singles, actions)]
        assert np.array_equal(obs, np.stack([r[0] for r in results]))
        assert np.array_equal(rewards, [r[1] for r in results])
    with pytest.raises(ValueError, match="one action per environment"):
        vec.step(np.zeros((2, 1)))


def test_policies_script_runs():
    import os
    import subprocess
    import sys
    from conftest import ROOT
    script = os.path.join(ROOT, "python", "examples", "snake_policies.py")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    out = subprocess.run([sys.executable, script, "--episodes", "2"], check=True, capture_output=True, text=True,
                         env=env).stdout
    assert "random" in out and "scripted reached  2 of 2 goals" in out, out


def test_vector_env_resets_finished_episodes():
    vec = srd.gym.VectorEnv(lambda: srd.gym.SnakeGoal(max_steps=2), 2)
    obs, _ = vec.reset(seed=3)
    vec.step(np.zeros((2, 1)))
    obs2, _, terminated, truncated, infos = vec.step(np.zeros((2, 1)))
    assert truncated.all() and not terminated.any()
    assert all("final_observation" in info for info in infos)
    assert np.array_equal(obs2, np.stack([e.observe() for e in vec.envs])), "the returned observation is the new episode's"
    assert all(e.model.t == 0 and e.n_steps == 0 for e in vec.envs)
