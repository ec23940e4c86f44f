# nn.LayerNorm, nn.BatchNorm2d (inference: running stats), nn.GroupNorm, nn.RMSNorm; load_state_dict for the BatchNorm
from tinygrad import Tensor, nn
x = Tensor([[[[float((n * 7 + c * 3 + i * 2 + j) % 9 - 4) for j in range(3)] for i in range(3)] for c in range(4)] for n in range(2)]).realize()
ln = nn.LayerNorm(3)
ln.weight, ln.bias = Tensor([1.0, 2.0, 0.5]), Tensor([0.1, 0.0, -0.1])
bn = nn.BatchNorm2d(4)
sd = {"weight": Tensor([1.0, 0.5, 2.0, 1.5]), "bias": Tensor([0.0, 0.1, 0.2, 0.3]), "running_mean": Tensor([0.5, -0.5, 1.0, 0.0]),
      "running_var": Tensor([1.0, 2.0, 0.5, 4.0]), "num_batches_tracked": Tensor(0)}
loaded = nn.state.load_state_dict(bn, sd, verbose=False)
gn = nn.GroupNorm(2, 4)
rms = nn.RMSNorm(3)
RESULT = {"keys": sorted(nn.state.get_state_dict(bn).keys()), "nloaded": len(loaded), "ln": ln(x).tolist(), "bn": bn(x).tolist(),
          "gn": gn(x).tolist(), "rms": rms(x).tolist()}
print(RESULT)
