"""Stable-Baselines3's learn() as its README writes it: an algorithm on gymnasium's CartPole,
``learn(total_timesteps)`` - a loop of its own, counted in environment steps - then the trained
policy acting in the environment. PPO by default (each iteration a rollout of 128 steps, then 4
passes of minibatches of 32: 16 optimizer steps); with ``dqn``: a DQN (train_freq=4,
gradient_steps=2, learning_starts=100; a callback that stops it after 10 000 episodes, an early
stop that never comes here). CPU, one thread."""
import sys

import gymnasium
import torch
from stable_baselines3 import DQN, PPO
from stable_baselines3.common.callbacks import StopTrainingOnMaxEpisodes

torch.set_num_threads(1)
env = gymnasium.make("CartPole-v1")
if sys.argv[1:] == ["dqn"]:
    model = DQN("MlpPolicy", env, learning_starts=100, train_freq=4, gradient_steps=2, seed=0)
    model.learn(total_timesteps=2_000, callback=StopTrainingOnMaxEpisodes(max_episodes=10_000))
else:
    model = PPO("MlpPolicy", env, n_steps=128, batch_size=32, n_epochs=4, seed=0)
    model.learn(total_timesteps=60 * 128)
obs, _ = env.reset(seed=0)
acted = 0
for _ in range(100):
    action, _ = model.predict(obs, deterministic=True)
    obs, reward, terminated, truncated, _ = env.step(action)
    acted += 1
    if terminated or truncated:
        obs, _ = env.reset()
print(f"after learn: the policy acted {acted} times")
