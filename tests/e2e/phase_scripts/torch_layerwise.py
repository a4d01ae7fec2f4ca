"""Layer-wise training, as pytorch/examples' forward-forward trains: each layer has its own
optimizer and a loop of its own over the full batch, called once per layer from an outer loop.
The probe leaves layer 0's loop at its next line; the outer loop goes on to layer 1, whose
optimizer has not stepped yet: a phase of its own (a cheaper layer: not layer 0's step time),
each as long as its own loop. Then the post-training evaluation runs. The full batch is drawn
once from a DataLoader of two batches a pass, before the loops, as forward-forward draws it: no
epoch of the steps (each layer's loop is one)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
torch.set_num_threads(1)


class Layer(nn.Linear):
    def __init__(self, n_in, n_out, steps):
        super().__init__(n_in, n_out)
        self.steps = steps
        self.opt = torch.optim.Adam(self.parameters(), lr=0.03)

    def train_layer(self, x):
        for i in range(self.steps):
            loss = self.forward(x).relu().pow(2).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        return self.forward(x).relu().detach()


layers = [Layer(256, 512, 300), Layer(512, 32, 200)]
loader = DataLoader(TensorDataset(torch.randn(1000, 256)), batch_size=512, shuffle=True)
(x,) = next(iter(loader))
h = x
for layer in layers:
    print("training a layer", flush=True)
    h = layer.train_layer(h)
print("post-training evaluation", float(h.mean()), flush=True)
