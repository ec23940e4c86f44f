# classification losses: sparse_categorical_crossentropy (plain, ignore_index, label_smoothing, sum) and cross_entropy
from tinygrad import Tensor
logits = Tensor([[1.0, 2.0, 0.5, -1.0], [0.1, -0.3, 2.2, 0.0], [1.5, 1.5, -2.0, 0.3]]).realize()
y = Tensor([1, 2, 0]).realize()
RESULT = {
  "scce": logits.sparse_categorical_crossentropy(y).item(),
  "scce_ignore": logits.sparse_categorical_crossentropy(Tensor([1, -100, 0]), ignore_index=-100).item(),
  "scce_smooth_sum": logits.sparse_categorical_crossentropy(y, label_smoothing=0.1, reduction="sum").item(),
  "ce": logits.cross_entropy(y).item(),
  "ce_none": logits.cross_entropy(y, reduction="none").tolist(),
}
print(RESULT)
