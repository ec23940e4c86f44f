# bitonic sort (values + indices), argsort descending, topk
from tinygrad import Tensor
x = Tensor([[3.0, 1.0, 4.0, 1.5, 5.0, 9.0], [2.0, 6.0, 5.0, 3.0, 5.5, 0.5]]).realize()
v, i = x.sort()
tv, ti = x.topk(2)
RESULT = {"sorted": v.tolist(), "idx": i.tolist(), "argsort_desc": x.argsort(descending=True).tolist(), "topk_v": tv.tolist(), "topk_i": ti.tolist()}
print(RESULT)
