// Typeset the math that arithmatex marked (and only that) with the KaTeX copy
// served by this site. Material's document$ fires on first load and after
// each instant navigation.
document$.subscribe(({ body }) => {
  for (const element of body.querySelectorAll(".arithmatex")) {
    renderMathInElement(element, {
      delimiters: [
        { left: "\\(", right: "\\)", display: false },
        { left: "\\[", right: "\\]", display: true },
      ],
      throwOnError: false,
    });
  }
});
