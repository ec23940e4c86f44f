# conv_transpose2d (stride 1 and 2, padding), nn.ConvTranspose2d with explicit weights
from tinygrad import Tensor, nn
x = Tensor([[[[float((i * 3 + j) % 5) for j in range(3)] for i in range(3)] for c in range(2)]]).realize()
w = Tensor([[[[float((o + i + j) % 3 - 1) for j in range(2)] for i in range(2)] for o in range(3)] for c in range(2)]).realize()
ct = nn.ConvTranspose2d(2, 3, 2, stride=2)
ct.weight, ct.bias = w, Tensor([0.5, 0.0, -0.5])
RESULT = {"ct1": x.conv_transpose2d(w).tolist(), "ct_pad": x.conv_transpose2d(w, padding=1).tolist(), "nn": ct(x).tolist()}
print(RESULT)
