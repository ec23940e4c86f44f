# binary cross entropy on probabilities and on logits (pos_weight), with the three reductions
from tinygrad import Tensor
p = Tensor([[0.9, 0.2], [0.6, 0.35], [0.05, 0.7]]).realize()
t = Tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]).realize()
z = Tensor([[2.0, -1.0], [0.3, -0.2], [-3.0, 0.8]]).realize()
RESULT = {"bce": p.binary_crossentropy(t).item(), "bce_none": p.binary_crossentropy(t, reduction="none").tolist(),
          "bcel_sum": z.binary_crossentropy_logits(t, reduction="sum").item(),
          "bcel_pw": z.binary_crossentropy_logits(t, pos_weight=Tensor([2.0, 0.5])).item()}
print(RESULT)
