# one-hot sums collapsed into gathers: a masked class pick, a where-select one-hot, nll with ignore_index, label smoothing
from tinygrad import Tensor
x = Tensor([[0.5, -1.0, 2.0, 1.5, 0.0], [1.0, 3.0, -2.0, 0.25, 4.0], [2.5, 0.5, 1.0, -1.5, 3.0], [0.0, 1.0, 2.0, 3.0, 4.0]]).realize()
idx = Tensor([4, 0, 2, 1]).realize()
oh = (Tensor.arange(5).reshape(1, 5) == idx.reshape(4, 1))
RESULT = {
  "pick": (oh.where(x, 0)).sum(1).tolist(),
  "pick_mul": (x * oh * (idx != 2).reshape(4, 1)).sum(1).tolist(),
  "nll": x.log_softmax().sparse_categorical_crossentropy(Tensor([1, -1, 3, 0]), ignore_index=-1).item(),
  "ce_smooth": x.cross_entropy(idx, reduction="none", label_smoothing=0.2).tolist(),
}
print(RESULT)
