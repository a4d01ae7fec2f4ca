"""Full-batch LBFGS on sine waves: adapted from pytorch/examples
`time_sequence_prediction/train.py` with its `generate_sine_wave.py` (commit 77f55b9).

Kept from the original: the two-LSTMCell Sequence model in float64, stepping through the
sequence with a Python loop (and `future` extra steps fed back); LBFGS(lr=0.8) with
`optimizer.step(closure)`, the closure printing its loss on every evaluation (LBFGS calls it up
to max_iter=20 times per step); `--steps` full-batch steps, each followed by a test prediction
of 1000 future points with its test loss, and a plot of the three test predictions saved as
`predict%d.pdf` (when matplotlib is installed).

Changed: the sine data are generated in the script (the same recipe as generate_sine_wave.py:
N sequences, each a sine with a random phase, but N = 40 and L = 400 instead of 100 x 1000,
instead of a traindata.pt written by a separate script); the plots go to a temp folder and are
skipped when matplotlib is missing.

There is no batch: each step uses the whole training set. Batch size flag: `--samples N` (the
number of training sequences, N - 3; default 37), the nearest thing; `--length L` sets L.
Full run, as recorded:
    python lbfgs.py --steps 8 --samples 37
    python lbfgs.py --steps 6 --samples 97
"""
from __future__ import print_function
import argparse
import os
import tempfile
import torch
import torch.nn as nn
import torch.optim as optim
import numpy as np
try:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
except ImportError:
    plt = None

class Sequence(nn.Module):
    def __init__(self):
        super(Sequence, self).__init__()
        self.lstm1 = nn.LSTMCell(1, 51)
        self.lstm2 = nn.LSTMCell(51, 51)
        self.linear = nn.Linear(51, 1)

    def forward(self, input, future = 0):
        outputs = []
        h_t = torch.zeros(input.size(0), 51, dtype=torch.double)
        c_t = torch.zeros(input.size(0), 51, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):# if we should predict the future
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


def generate_sine_wave(N, L, T=20):
    # generate_sine_wave.py, in memory
    np.random.seed(2)
    x = np.empty((N, L), 'int64')
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    return np.sin(x / 1.0 / T).astype('float64')


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=8, help='steps to run')
    parser.add_argument('--samples', type=int, default=37, help='training sequences (the full batch)')
    parser.add_argument('--length', type=int, default=400, help='points per sequence')
    opt = parser.parse_args()
    # set random seed to 0
    np.random.seed(0)
    torch.manual_seed(0)
    # load data and make training set
    data = generate_sine_wave(opt.samples + 3, opt.length)
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])
    out_dir = os.path.join(tempfile.gettempdir(), 'probecast_shapes', 'lbfgs')
    os.makedirs(out_dir, exist_ok=True)
    # build the model
    seq = Sequence()
    seq.double()
    criterion = nn.MSELoss()
    # use LBFGS as optimizer since we can load the whole data to train
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8)
    #begin to train
    for i in range(opt.steps):
        print('STEP: ', i)
        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            print('loss:', loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        # begin to predict, no need to track gradient here
        with torch.no_grad():
            future = 1000
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            print('test loss:', loss.item())
            y = pred.detach().numpy()
        if plt is None:
            continue
        # draw the result
        plt.figure(figsize=(30,10))
        plt.title('Predict future values for time sequences\n(Dashlines are predicted values)', fontsize=30)
        plt.xlabel('x', fontsize=20)
        plt.ylabel('y', fontsize=20)
        plt.xticks(fontsize=20)
        plt.yticks(fontsize=20)
        def draw(yi, color):
            plt.plot(np.arange(input.size(1)), yi[:input.size(1)], color, linewidth = 2.0)
            plt.plot(np.arange(input.size(1), input.size(1) + future), yi[input.size(1):], color + ':', linewidth = 2.0)
        draw(y[0], 'r')
        draw(y[1], 'g')
        draw(y[2], 'b')
        plt.savefig(os.path.join(out_dir, 'predict%d.pdf'%i))
        plt.close()
