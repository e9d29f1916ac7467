"""gym.py — srd models as reinforcement-learning environments with the Gymnasium API:
reset(seed=None, options=None) -> (obs, info), step(action) -> (obs, reward, terminated,
truncated, info), observation_space and action_space. An environment subclasses gymnasium.Env
when Gymnasium is installed and works the same without it (its spaces are then srd.gym.Box).

SrdEnv is the base: it owns a Model, applies an action by setting inputs, advances the model
by `control_period` seconds per step, and asks the subclass for the observation, the reward and
whether the episode ended. SnakeGoal is an example: the snake of examples/snake_goal.srd
swimming toward a goal, steered by the curvature bias `turn`.
"""
import math
import os

import numpy as np

from .errors import NumericalError
from .model import Model

try:  # Gymnasium is optional: the environments follow its API either way.
    import gymnasium as _gymnasium
    _Base = _gymnasium.Env
    from gymnasium.spaces import Box
except ImportError:  # pragma: no cover - depends on the machine
    _gymnasium = None
    _Base = object

    class Box:
        """A box of real vectors, as gymnasium.spaces.Box: low <= x <= high elementwise."""

        def __init__(self, low, high, shape=None, dtype=np.float32, seed=None):
            shape = shape if shape is not None else np.shape(low)
            self.low = np.broadcast_to(np.asarray(low, dtype=dtype), shape).copy()
            self.high = np.broadcast_to(np.asarray(high, dtype=dtype), shape).copy()
            self.shape, self.dtype = tuple(shape), np.dtype(dtype)
            self._rng = np.random.default_rng(seed)

        def seed(self, seed=None):
            self._rng = np.random.default_rng(seed)
            return [seed]

        def sample(self):
            low = np.where(np.isfinite(self.low), self.low, -1.0)
            high = np.where(np.isfinite(self.high), self.high, 1.0)
            return self._rng.uniform(low, high).astype(self.dtype)

        def contains(self, x):
            x = np.asarray(x)
            return x.shape == self.shape and bool(np.all(x >= self.low) and np.all(x <= self.high))

        def __repr__(self):
            return "Box(%s, %s, %s, %s)" % (self.low.min(), self.high.max(), self.shape, self.dtype)

HAS_GYMNASIUM = _gymnasium is not None
EXAMPLES = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))


class SrdEnv(_Base):
    """An srd model as an environment. Subclasses set observation_space and action_space and
    define observe(), reward() and, if episodes can end early, terminated(); apply(action)
    sets inputs (by default: input k of `action_inputs` to action[k], clipped to the space)."""

    metadata = {"render_modes": []}
    action_inputs = ()

    def __init__(self, path, control_period, max_steps, **params):
        self.model = Model(path, **params)
        # A whole number of the model's steps per action, so that every episode (and every copy
        # in a VectorEnv) samples the same instants.
        self.steps_per_action = max(1, int(round(float(control_period) / self.model.dt)))
        self.control_period = self.steps_per_action * self.model.dt
        self.max_steps = int(max_steps)
        self.np_random = np.random.default_rng()
        self.n_steps = 0

    # hooks
    def observe(self):
        raise NotImplementedError

    def reward(self, before):
        raise NotImplementedError

    def terminated(self):
        return False

    def on_reset(self, options):
        """Chooses the episode's task (goal, ...) from self.np_random."""

    def apply(self, action):
        action = np.clip(np.asarray(action, dtype=float).reshape(self.action_space.shape), self.action_space.low,
                         self.action_space.high)
        for name, value in zip(self.action_inputs, action):
            self.model.set_input(name, float(value))

    # Gymnasium API
    def reset(self, seed=None, options=None):
        if _gymnasium is not None:
            super().reset(seed=seed)
        elif seed is not None:
            self.np_random = np.random.default_rng(seed)
        if seed is not None:
            self.action_space.seed(seed)
        self.model.reset()
        self.n_steps = 0
        self.on_reset(options or {})
        return self.observe(), {"t": self.model.t}

    def step(self, action):
        before = self.observe()
        self.apply(action)
        failed = False
        try:
            self.model.step(self.steps_per_action)
        except NumericalError:
            failed = True  # the episode ends; the model keeps its last good state
        return self.finish_step(before, failed)

    def finish_step(self, before, failed):
        """The step's results once the model has advanced (or failed)."""
        self.n_steps += 1
        obs = self.observe()
        reward = float(self.reward(before))
        terminated = failed or bool(self.terminated())
        truncated = not terminated and self.n_steps >= self.max_steps
        return obs, reward, terminated, truncated, {"t": self.model.t, "failed": failed}

    def close(self):
        self.model.close()


class SnakeGoal(SrdEnv):
    """The snake of examples/snake_goal.srd swims toward a goal in the plane. Action: the
    curvature bias `turn` (1/m, in [-max_turn, max_turn]; positive turns clockwise). Observation: the goal relative to the
    head in the head's frame (forward, left; m), and the distance (m). Reward: the distance
    gained in the step, per centimetre; +1 and the end of the episode within `reach` of the goal."""

    action_inputs = ("turn",)

    def __init__(self, path=None, control_period=0.5, max_steps=80, max_turn=10.0, reach=0.02, **params):
        super().__init__(path or os.path.join(EXAMPLES, "snake_goal.srd"), control_period, max_steps, **params)
        self.max_turn, self.reach = float(max_turn), float(reach)
        self.action_space = Box(-self.max_turn, self.max_turn, shape=(1,), dtype=np.float32)
        self.observation_space = Box(-np.inf, np.inf, shape=(3,), dtype=np.float32)
        self.goal = np.array([0.2, 0.1])

    def on_reset(self, options):
        if "goal" in options:
            self.goal = np.asarray(options["goal"], dtype=float)[:2]
        else:  # ahead of the head, up to 45 degrees to either side, 6 to 15 cm away
            angle = self.np_random.uniform(-math.pi / 4, math.pi / 4)
            distance = self.np_random.uniform(0.06, 0.15)
            self.goal = np.array([0.1 + distance * math.cos(angle), distance * math.sin(angle)])

    def heading(self):
        """Unit vector from tail to head: the direction the snake swims, averaged over its wave."""
        x = self.model.x
        d = x[-1, :2] - x[0, :2]
        return d / max(np.linalg.norm(d), 1e-12)

    def distance(self):
        return float(np.linalg.norm(self.goal - self.model.x[-1, :2]))

    def observe(self):
        forward = self.heading()
        left = np.array([-forward[1], forward[0]])
        rel = self.goal - self.model.x[-1, :2]
        return np.array([rel @ forward, rel @ left, np.linalg.norm(rel)], dtype=np.float32)

    def reward(self, before):
        gained = float(before[2]) - self.distance()
        return 100.0 * gained + (1.0 if self.terminated() else 0.0)

    def terminated(self):
        return self.distance() < self.reach


class VectorEnv:
    """n copies of an environment stepped together: actions applied to each, then every model
    advanced on threads with one call (srd.Batch), as gymnasium's vector environments do. An
    episode that ends is reset at once; its last observation is in infos[k]["final_observation"]."""

    def __init__(self, make_env, n, threads=0):
        from .batch import Batch
        self.envs = [make_env() for _ in range(int(n))]
        self.num_envs = len(self.envs)
        self.batch = Batch(models=[e.model for e in self.envs], threads=threads)
        self.single_observation_space = self.envs[0].observation_space
        self.single_action_space = self.envs[0].action_space

    def reset(self, seed=None, options=None):
        results = [e.reset(seed=None if seed is None else seed + k, options=options) for k, e in enumerate(self.envs)]
        return np.stack([r[0] for r in results]), [r[1] for r in results]

    def step(self, actions):
        actions = np.asarray(actions)
        if actions.shape[:1] != (self.num_envs,):
            raise ValueError("step() takes one action per environment: an array of %d rows, not shape %s"
                             % (self.num_envs, actions.shape))
        befores = [e.observe() for e in self.envs]
        for e, a in zip(self.envs, actions):
            e.apply(a)
        try:
            self.batch.step(self.envs[0].steps_per_action)
        except NumericalError:
            pass  # the failed models are named in last_status
        results = [e.finish_step(b, int(st) != 0) for e, b, st in zip(self.envs, befores, self.batch.last_status)]
        obs = np.stack([r[0] for r in results])
        infos = [r[4] for r in results]
        for k, (e, r) in enumerate(zip(self.envs, results)):
            if r[2] or r[3]:
                infos[k]["final_observation"] = r[0]
                obs[k] = e.reset()[0]
        return (obs, np.array([r[1] for r in results]), np.array([r[2] for r in results]),
                np.array([r[3] for r in results]), infos)

    def close(self):
        for e in self.envs:
            e.close()


def steer_toward_goal(obs, gain=30.0, max_turn=10.0):
    """A simple scripted policy for SnakeGoal: turn toward the goal's bearing (a goal to the
    left, positive bearing, needs a negative turn)."""
    bearing = math.atan2(float(obs[1]), float(obs[0]))
    return np.array([np.clip(-gain * bearing, -max_turn, max_turn)], dtype=np.float32)
