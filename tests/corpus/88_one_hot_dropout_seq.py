# one_hot, dropout outside training (identity), sequential, softplus/relu6/hardswish chain
from tinygrad import Tensor
idx = Tensor([0, 2, 1, 3]).realize()
x = Tensor([[-1.0, 0.5, 2.0], [3.0, -4.0, 0.25]]).realize()
RESULT = {"oh": idx.one_hot(4).tolist(), "drop": x.dropout(0.5).tolist(),
          "seq": x.sequential([lambda t: t * 2, Tensor.relu, lambda t: t + 1]).tolist(),
          "acts": (x.softplus() + x.relu6() + x.hardswish()).tolist()}
print(RESULT)
