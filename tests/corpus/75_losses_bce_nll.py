# binary_crossentropy, binary_crossentropy_logits (pos_weight), nll_loss (weight, ignore_index)
from tinygrad import Tensor
p = Tensor([0.9, 0.2, 0.6, 0.35]).realize()
t = Tensor([1.0, 0.0, 1.0, 0.0]).realize()
z = Tensor([2.0, -1.0, 0.3, -0.2]).realize()
lp = Tensor([[-0.5, -1.2, -2.0], [-1.5, -0.3, -2.5], [-0.9, -0.9, -1.4]]).realize()
y = Tensor([0, 1, 2]).realize()
RESULT = {
  "bce": p.binary_crossentropy(t).item(),
  "bce_sum": p.binary_crossentropy(t, reduction="sum").item(),
  "bcel": z.binary_crossentropy_logits(t).item(),
  "bcel_pw": z.binary_crossentropy_logits(t, pos_weight=Tensor([2.0, 2.0, 0.5, 0.5])).item(),
  "nll": lp.nll_loss(y).item(),
  "nll_w": lp.nll_loss(y, weight=Tensor([1.0, 2.0, 0.5])).item(),
  "nll_ign": lp.nll_loss(y, ignore_index=1, reduction="none").tolist(),
}
print(RESULT)
