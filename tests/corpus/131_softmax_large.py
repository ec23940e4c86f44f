# softmax over 64x1000 rows and log_softmax
from tinygrad import Tensor
x = ((Tensor.arange(64 * 1000) % 17).float() * 0.1).reshape(64, 1000).clone("CPU").realize()
RESULT = {"sm": x.softmax(-1).sum(axis=1).tolist()[:4], "ls": x.log_softmax(-1)[0, :3].tolist()}
print(RESULT)
