"""Spinning Up's PPO update shape: each epoch a rollout (numpy work standing in for an
environment), then up to train_pi_iters policy steps that stop once the KL passes 1.5 x
target_kl, then train_v_iters value steps. Some epochs break off early (lr 1e-3), most do not."""
import sys

import numpy as np
import torch
from torch import nn

torch.manual_seed(0)
torch.set_num_threads(1)
epochs, steps_per_epoch = int(sys.argv[1]) if len(sys.argv) > 1 else 30, 1000
train_pi_iters, train_v_iters, target_kl = 80, 80, 0.01
obs_dim, act_dim = 16, 4
pi = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, act_dim))
v = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, 1))
pi_optimizer = torch.optim.Adam(pi.parameters(), lr=1e-3)
vf_optimizer = torch.optim.Adam(v.parameters(), lr=1e-3)
rng = np.random.default_rng(0)


def rollout():
    obs = np.zeros((steps_per_epoch, obs_dim), np.float32)
    x = rng.normal(size=obs_dim)
    for t in range(steps_per_epoch):  # an environment's steps, in numpy
        x = 0.9 * x + 0.1 * rng.normal(size=obs_dim)
        obs[t] = x
    obs = torch.from_numpy(obs)
    with torch.no_grad():
        logits = pi(obs)
        act = torch.distributions.Categorical(logits=logits).sample()
        logp_old = torch.distributions.Categorical(logits=logits).log_prob(act)
    adv = torch.randn(steps_per_epoch)
    ret = torch.randn(steps_per_epoch)
    return obs, act, logp_old, adv, ret


def update(obs, act, logp_old, adv, ret):
    for i in range(train_pi_iters):
        pi_optimizer.zero_grad()
        logp = torch.distributions.Categorical(logits=pi(obs)).log_prob(act)
        ratio = torch.exp(logp - logp_old)
        loss_pi = -(torch.min(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv)).mean()
        kl = (logp_old - logp).mean().item()
        if kl > 1.5 * target_kl:
            break
        loss_pi.backward()
        pi_optimizer.step()
    for i in range(train_v_iters):
        vf_optimizer.zero_grad()
        loss_v = ((v(obs).squeeze(-1) - ret) ** 2).mean()
        loss_v.backward()
        vf_optimizer.step()
    return i


for epoch in range(epochs):
    data = rollout()
    update(*data)
    print("epoch", epoch, flush=True)
