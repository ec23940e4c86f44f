# one training step of a 2-block transformer language model (embedding, pre-norm causal self-attention with 4 heads,
# GELU MLP, tied output head) with Adam: the forward, the backward and the optimizer's update
from tinygrad import Tensor, nn
from tinygrad.helpers import Context
Tensor.manual_seed(0)
V, D, H, T, B = 64, 64, 4, 32, 4
class Block:
  def __init__(self):
    self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
    self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
    self.fc1, self.fc2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)
  def __call__(self, x):
    q, k, v = self.qkv(self.ln1(x)).reshape(B, T, 3, H, D // H).permute(2, 0, 3, 1, 4)
    a = q.scaled_dot_product_attention(k, v, is_causal=True).transpose(1, 2).reshape(B, T, D)
    x = x + self.proj(a)
    return x + self.fc2(self.fc1(self.ln2(x)).gelu())
class Model:
  def __init__(self):
    self.emb, self.pos = nn.Embedding(V, D), nn.Embedding(T, D)
    self.blocks = [Block(), Block()]
    self.ln = nn.LayerNorm(D)
  def __call__(self, idx):
    x = self.emb(idx) + self.pos(Tensor.arange(T).reshape(1, T))
    for b in self.blocks: x = b(x)
    return self.ln(x) @ self.emb.weight.T
model = Model()
opt = nn.optim.Adam(nn.state.get_parameters(model), lr=1e-3)
idx = Tensor([[(i * 7 + b * 3) % V for i in range(T)] for b in range(B)])
tgt = Tensor([[(i * 7 + b * 3 + 1) % V for i in range(T)] for b in range(B)])
with Context(TRAINING=1):
  opt.zero_grad()
  loss = model(idx).sparse_categorical_crossentropy(tgt).backward()
  opt.step()
print("loss", loss.item())
