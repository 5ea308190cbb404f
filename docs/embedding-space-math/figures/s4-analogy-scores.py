"""§4.1: cosine of every row to the 3CosAdd query king - man + woman."""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch

rng = np.random.default_rng(6)  # the same planted table as on the page
d = 32
words = [
    "man",
    "woman",
    "boy",
    "girl",
    "king",
    "queen",
    "prince",
    "princess",
    "father",
    "mother",
    "son",
    "daughter",
]
concept = rng.normal(size=(3, d))
gender_dir = lm.normalize(rng.normal(size=d))
age_dir = lm.normalize(rng.normal(size=d))
female = np.tile([-1, 1, -1, 1], 3)
young = np.tile([-1, -1, 1, 1], 3)
E = (
    np.repeat(concept, 4, axis=0)
    + np.outer(female, gender_dir)
    + 0.8 * np.outer(young, age_dir)
)
E = np.vstack([E + 0.4 * rng.normal(size=E.shape), rng.normal(size=(20, d))])

man, woman, king = (
    words.index("man"),
    words.index("woman"),
    words.index("king"),
)
scores = lm.cosine(E[king] - E[man] + E[woman], E)
order = np.argsort(-scores)[:8]
labels = [words[j] if j < len(words) else f"filler {j}" for j in order]
query = [j in (man, king, woman) for j in order]

fig, ax = plt.subplots(figsize=(6.4, 3.6))
ax.bar(
    range(8),
    scores[order],
    color=["tab:orange" if q else "tab:blue" for q in query],
)
ax.set_xticks(range(8), labels, rotation=30)
ax.set_ylabel("cosine to king − man + woman")
ax.set_title("The query's nearest row is a query word (orange)")
ax.legend(
    handles=[
        Patch(color="tab:orange", label="query word (a, b or c)"),
        Patch(color="tab:blue", label="other row"),
    ],
    loc="upper right",
)
fig.tight_layout()
