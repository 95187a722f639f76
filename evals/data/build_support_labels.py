"""Rebuild the constructed (part B) rows of ``support_labels.jsonl``.

``support_labels.jsonl`` is a hand-labelled set of (sentence, cited paper) pairs for measuring a
citation-support checker: ``supported`` means the cited paper's title + abstract (+ author list)
states what the sentence says; same topic is not support.

Two kinds of rows:

* ``origin == "model"``: sentences taken from real ``rag ask --json`` answers (bundled local
  model, hybrid retrieval), each paired with the paper of the [n] it carries and labelled by
  reading that paper's abstract. They are not regenerated here; this script keeps them as they
  are in the existing file.
* every other origin: hard cases built by hand from the corpus, listed below in ``CONSTRUCTED``.
  Papers were drawn with ``random.Random(2025).shuffle`` over the corpus order (the first ~95
  papers of that order, assigned to categories in blocks); "other-abstract" sentences come from
  the most TF-IDF-similar other paper. The sentences, labels and reasons were written by reading
  the abstracts - no automatic checker was used.

Usage: python evals/data/build_support_labels.py [--corpus PATH] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = HERE.parent.parent.parent / "shared" / "data" / "iclr2025" / "papers.jsonl"
DEFAULT_OUT = HERE / "support_labels.jsonl"

S, U = "supported", "unsupported"

# (paper_id, sentence, label, origin, reason)
CONSTRUCTED: list[tuple[str, str, str, str, str]] = [
    # ---- verbatim: one abstract sentence copied exactly (final period added where the corpus
    # drops it) --------------------------------------------------------------------------------
    ("4xWQS2z77v", "With the characterization, we show that the topology of the global optima goes through a phase transition as the width of the network changes, and construct counterexamples where the problem may have a continuum of optimal solutions.", S, "verbatim", "exact abstract sentence"),
    ("1jcnvghayD", "We build on variational Bayesian last layers (VBLLs), and connect training of these models to exact conditioning in GPs.", S, "verbatim", "exact abstract sentence"),
    ("fn36V5qsCw", "We first prove that under a novel structural condition we term reward-agnostic policy completeness, these sorts of local-search based IRL algorithms are able to avoid compounding errors.", S, "verbatim", "exact abstract sentence"),
    ("eW4yh6HKz4", "Notably, CBQ only takes 4.3 hours to quantize a weight-only quantization of a 4-bit LLAMA1-65B model, achieving a commendable trade off between performance and efficiency.", S, "verbatim", "exact abstract sentence (last one; period added)"),
    ("PSiijdQjNU", "ProfileBFN extends the discrete Bayesian Flow Network from an MSA profile perspective, which can be trained on single protein sequences by regarding it as a degenerate profile, thereby achieving efficient protein family design by avoiding large-scale MSA data construction and training.", S, "verbatim", "exact abstract sentence"),
    ("rwqShzb9li", "We find that highly predictive heads are primarily located in the middle layers, often speculated to encode high-level concepts and tasks.", S, "verbatim", "exact abstract sentence"),
    ("uTqnyF0JNR", "To bridge this gap, we introduce **IGL-Bench**, a foundational comprehensive benchmark for imbalanced graph learning, embarking on **17** diverse graph datasets and **24** distinct IGL algorithms with uniform data processing and splitting strategies.", S, "verbatim", "exact abstract sentence, markdown bold kept"),
    ("6EUtjXAvmj", "We validate the proposed approach through extensive experiments on linear and nonlinear inverse problems, including challenging cases with latent diffusion models as priors, and demonstrate its effectiveness in reconstructing electrocardiogram (ECG) from partial measurements for accurate cardiac diagnosis.", S, "verbatim", "exact abstract sentence (last one; period added)"),
    ("Ty6TCjKNSF", "Our solution is based on ideas from asymptotic random matrix theory, specifically the Marchenko-Pastur law.", S, "verbatim", "exact abstract sentence"),
    ("KHkBpvmYVI", "EVA is 70× faster than SOTA model RFDiffusion with competitive and even better performance on benchmark tests.", S, "verbatim", "exact abstract sentence"),
    ("Es4RPNDtmq", "This paper presents a novel weight initialization method for neural networks with tanh activation function.", S, "verbatim", "exact abstract sentence"),
    ("kVrwHLAb20", "Ward consistently outperforms all baselines, achieving higher accuracy, superior query efficiency and robustness.", S, "verbatim", "exact abstract sentence"),
    ("9KiE3t6CsL", "We propose ALBAR, a novel adversarial training method that mitigates foreground and background biases without requiring specialized knowledge of the bias attributes.", S, "verbatim", "exact abstract sentence"),
    ("y9A2TpaGsE", "Effectively, the causal world model acts as a simulator that the LLM can query and interact with.", S, "verbatim", "exact abstract sentence"),
    ("Fu0aggezN9", "For this new task, we construct a relation graph-based document structure analysis dataset(GraphDoc) with 80K document images and 4.13M relation annotations, enabling training models to complete multiple tasks like reading order, hierarchical structures analysis, and complex inter-element relationship inference.", S, "verbatim", "exact abstract sentence"),
    ("CahIEKCu5Q", "CodeMMLU includes nearly 20,000 questions spanning diverse domains, including code analysis, defect detection, and software engineering principles across multiple programming languages.", S, "verbatim", "exact abstract sentence"),
    ("TEmE9PSC65", "In this paper, we validate the viability of this method on a wide range of popular Convolutional Neural Network (CNN) benchmarks and compare this approach to existing Knowledge Distillation schemes.", S, "verbatim", "exact abstract sentence ('this method' = Twin Network Augmentation)"),
    ("Pj4Aid3XqL", "We find that pre-training with a mixture of image and text data allows models to perform better on vision-language tasks while maintaining strong performance on text-only evaluations.", S, "verbatim", "exact abstract sentence"),
    ("AoraWUmpLU", "Smooth activation functions guarantee globally unique solutions for both forward and backward ODEs, while sufficient nonlinearity is essential for maintaining the spectral properties of the Neural Tangent Kernel (NTK) during training.", S, "verbatim", "exact abstract sentence"),
    ("cC3LxGZasH", "Our experiments on multiple open-source datasets show clear evidence that it is a superior alternative to the widely used FVD metric, requiring only 16% of the samples to reach its steady value, while increasing alignment with human evaluation by 34%, on average.", S, "verbatim", "exact abstract sentence ('it' = JEDi)"),
    ("qgsXsqahMq", "Our method outperforms state-of-the-art calibration techniques, reducing expected calibration error (ECE) by $\\geq$ 25% across 10 GNN benchmark datasets.", S, "verbatim", "exact abstract sentence, LaTeX kept"),
    ("11xgiMEI5o", "Extensive evaluations on the Waymo dataset show that our approach outperforms prior state-of-the-art methods quantitatively and qualitatively by a large margin.", S, "verbatim", "exact abstract sentence"),
    ("WKfb1xGXGx", "We present Perm, a learned parametric representation of human 3D hair designed to facilitate various hair-related applications.", S, "verbatim", "exact abstract sentence"),
    ("IjduZQK8gM", "We \ufb01nd that popular large language models, such as Llama attend maximally to the first token in 98% of attention heads, a behaviour we attribute to the softmax function.", S, "verbatim", "exact abstract sentence, including the 'fi' ligature of the corpus text"),
    # ---- trimmed: one clause kept, or only the subject changed ---------------------------------
    ("fgUFZAxywx", "The authors introduce the Linear Spherical Sliced Optimal Transport (LSSOT) framework, which utilizes slicing to embed spherical distributions into $L^2$ spaces.", S, "trimmed", "first clause of the LSSOT sentence, subject 'we' -> 'the authors'"),
    ("Zk9guOl9NS", "This paper conducts an extensive grid search on the competitive programming benchmarks CodeContests and TACO for multiple LLM families and sizes.", S, "trimmed", "abstract: grid search on CodeContests and TACO for multiple LLM families and sizes"),
    ("mAmCdASmJ5", "The paper proposes injecting an independent noise into the normalized outputs of the encoder, while keeping the same InfoMax training objective.", S, "trimmed", "abstract sentence with subject change only"),
    ("0iscEAo2xB", "The authors use data from 5 real-world RCTs in a variety of domains.", S, "trimmed", "abstract: 'we use data from 5 real-world RCTs in a variety of domains'"),
    ("Q6a9W6kzv5", "PhysBench contains 10,002 entries of interleaved video-image-text data.", S, "trimmed", "first clause of the abstract's PhysBench sentence"),
    ("ybfmpJiKXX", "The paper introduces a dataset composed of 5,731 modern slavery statements taken from the Australian Modern Slavery Register and annotated at the sentence level.", S, "trimmed", "abstract sentence minus purpose clause, subject change"),
    ("5IWJBStfU7", "Their experiments reveal overwhelming evidence of non-identifiability in all cases.", S, "trimmed", "first clause of the abstract's results sentence"),
    ("uAFHCZRmXk", "The driving factor behind both the modality gap and the object bias is an information imbalance between images and captions.", S, "trimmed", "abstract: experiments revealed the driving factor ... is an information imbalance between images and captions"),
    ("OCpxDSn0G4", "This paper introduces Fisher Information Maximization loss for neural radiance fields (FIM-NeRF), which maximizes information gains at the sample level.", S, "trimmed", "abstract sentence trimmed, subject change"),
    ("md9qolJwLl", "The authors create three datasets for evaluation.", S, "trimmed", "abstract: 'We create three datasets for evaluation'"),
    ("mzL19kKE3r", "MMR comprises 194K complex and implicit instructions that consider multi-target, object-level, and part-level aspects.", S, "trimmed", "abstract sentence minus 'based on pre-existing image-mask sets'"),
    ("UV5p3JZMjC", "The paper studies three conceptual tasks: associative recall, graph coloring, and agents that explore grid worlds.", S, "trimmed", "abstract lists exactly these three conceptual tasks"),
    ("torbeUlslS", "This paper proposes a novel Probability-Space MIL network (PSMIL).", S, "trimmed", "abstract: 'we propose a novel Probability-Space MIL network (PSMIL)'"),
    ("ogXkmugNZw", "CoMOGA guarantees convergence to global optima in a tabular setting.", S, "trimmed", "abstract: 'Despite its simplicity, CoMOGA guarantees convergence to global optima in a tabular setting'"),
    ("uaMSBJDnRv", "The work sheds light on the causes and implications of a counterintuitive phenomenon termed likelihood displacement.", S, "trimmed", "abstract: sheds light on causes and implications of this phenomenon, which we term likelihood displacement"),
    ("G328D1xt4W", "The authors propose a novel algorithm that enables direct backpropagation of rewards through entire trajectories generated by diffusion models.", S, "trimmed", "abstract sentence minus the Gumbel-Softmax clause, subject change"),
    ("ByCV9xWfNK", "The authors discover that intermediate layer representations frequently offer substantially better generalisation than those from the penultimate layer.", S, "trimmed", "abstract sentence with subject change only"),
    ("iXbUquaWbl", "The paper proposes end-to-end learnable Gaussian mixture priors (GMPs).", S, "trimmed", "abstract: 'we propose end-to-end learnable Gaussian mixture priors (GMPs)'"),
    ("FUaDMRVrbS", "This paper develops a novel theoretical framework for determining kernel parameter identifiability for kernels holomorphic near zero.", S, "trimmed", "abstract sentence minus 'we bridge this gap by', subject change"),
    ("OdnqG1fYpo", "Moner is an unsupervised MoCo method that jointly reconstructs artifact-free MR images and estimates accurate motion from undersampled, rigid motion-corrupted k-space data, without requiring any training data.", S, "trimmed", "abstract's Moner sentence with subject change only"),
    ("zjAEa4s3sH", "Independent trajectories cluster along a low-dimensional, non-Euclidean manifold.", S, "trimmed", "first clause of the abstract's observation sentence"),
    ("5BjQOUXq7i", "To empirically validate RegMix, the authors train 512 models with 1M parameters for 1B tokens.", S, "trimmed", "abstract sentence minus purpose clause, subject change"),
    ("d2UrCGtntF", "4DiM is a cascaded diffusion model for 4D novel view synthesis (NVS).", S, "trimmed", "first clause of the abstract's first sentence"),
    ("gqbbL7k8BF", "The paper proposes a CI test specifically designed to accommodate the presence of discretization.", S, "trimmed", "abstract: 'we propose a CI test specifically designed to accommodate the presence of discretization'"),
    # ---- other-abstract: sentence from a similar paper, cited to this one ----------------------
    ("fvkElsJOsN", "From these insights, we propose a new position representation method that captures multiple scales (i.e., window sizes) by leveraging wavelet transforms without limiting the model's attention field.", U, "other-abstract", "from OhauMUNW8T (wavelet positions); PINE changes attention to bidirectional, no wavelets"),
    ("1Z3C49JQVf", "We demonstrate that multiple backdoors can be simultaneously installed in a single model through parallel data poisoning attacks without substantially degrading clean accuracy.", U, "other-abstract", "from rK0YJwL69S; this paper studies selective clean-label poisoning of one target class, not multiple simultaneous backdoors"),
    ("cWHonXThtM", "In this work, we show that the potential of vanilla KD has been underestimated and demonstrate that the ingenious application of data augmentation methods can close the gap between it and more complex, well-designed methods.", U, "other-abstract", "from AugKD (AC3713Fmhx); MiPKD proposes prior mixers, says nothing about data augmentation"),
    ("f7O3hITh5s", "Our extensive evaluation of 60 LLMs shows that LLMs are not yet capable of following complex instructions to use function calls precisely, with scores up to 60%, significantly lower than the human performance of 97%.", U, "other-abstract", "from BigCodeBench (YrycTjllL0); API Pack reports no 60-LLM evaluation or human score"),
    ("MeGDmZjUXy", "We discover significant variance in alignment across languages, challenging the assumption of uniform moral reasoning in AI systems and highlighting the importance of incorporating diverse perspectives in AI ethics.", U, "other-abstract", "from MultiTP (VEqPDZIDAh); this paper fine-tunes agents with moral rewards on IPD, no languages"),
    ("30oIfmrcFO", "We design task-specific scratchpads enabling the model to focus on a fixed number of tokens per each next-token prediction step, and apply multi-level versions of Position Coupling to let Transformers know the right position to attend to.", U, "other-abstract", "from eIgGesYKLG; Seq-VCR uses variance-covariance regularization and pause tokens, not scratchpads/Position Coupling"),
    ("mPdmDYIQ7f", "In our study, we enhance an LLM-based web agent by simply refining its observation and action space, aligning these more closely with the LLM's capabilities.", U, "other-abstract", "from AgentOccam (oWdzUpOlkX); AgentSquare searches a modular agent design space"),
    ("ugyqNEOjoU", "To ensure the scientific authenticity and real-world relevance of our benchmark, we extract 102 tasks from 44 peer-reviewed publications in four disciplines and engage nine subject matter experts to validate them.", U, "other-abstract", "from ScienceAgentBench (6z4YKr0GK6); ScImage has no 102 tasks/44 publications, uses 11 scientists"),
    ("QogcGNXJVw", "We systematically test the identifiability of both strategies using simple tasks (learning Boolean functions) and multi-layer perceptrons small enough to allow a complete enumeration of candidate explanations.", U, "other-abstract", "from 5IWJBStfU7; this paper studies computational complexity of circuit queries, not identifiability tests"),
    ("QjSOgxJ0hp", "To ensure privacy, we introduce a novel method where we apply local differential privacy to the two low-rank components of the local prompt, and global differential privacy to the global prompt.", U, "other-abstract", "from DP-FPL (Equ277PBN0); this paper is shuffled DP for kernel densities, no prompts"),
    ("XWBE90OYlH", "We also introduce a novel complex-valued Laplacian for directed graphs with fuzzy edges where the real and imaginary parts represent information flow in opposite directions.", U, "other-abstract", "from CoED GNN (iAmR7FfMmq); EIGN uses direction-aware edge-level shift operators, no fuzzy edges"),
    ("M8OGl34Pmg", "Previous research has developed datasets of human motion in indoor scenes, but these are often limited in scale and lack the nuanced social navigation dynamics common in home environments.", U, "other-abstract", "from LocoVR (9mBodivRIo); SDA abstract says nothing about existing indoor motion datasets"),
    ("GpdO9r73xT", "Our analyses reveal that different initial random seeds tend to guide the model to place objects in distinct image areas, potentially adhering to specific patterns of camera angles and image composition associated with the seed.", U, "other-abstract", "from 5BSlakturs; Crystal Ball attributes positions to trigger patches, never mentions camera angles/composition per seed"),
    ("S85PP4xjFD", "For numerical composition, we observe relative increases of 29.3% and 19.5% for Stable Diffusion and PixArt-α, respectively.", U, "other-abstract", "from 5BSlakturs; EvoGen abstract gives no numbers and no PixArt-α"),
    ("Iht4NNVqk0", "We show that the standard i.i.d. sampling used in a broad spectrum of algorithms for post-hoc explanation leads to an approximation error worthy of improvement.", U, "other-abstract", "from CTE (LiUfN9h0Lx); StartGrad is about mask initialization, not i.i.d. sampling error"),
    # ---- swapped-entity / wrong-title -----------------------------------------------------------
    ("4muXQ5r8Ol", "ScImage samples 2,864 AIGIs from 16 text-to-image models, each paired with question-answers annotated by human experts.", U, "swapped-entity", "the benchmark is A-Bench; ScImage is a different paper"),
    ("fMbLszVO1H", "MambaExtend is a training-free technique that significantly enhances the long-context capabilities of Mamba models.", U, "swapped-entity", "this paper's method is LongMamba; MambaExtend is another paper (LgzRo1RpLS)"),
    ("4ub9gpx9xw", "The method estimates faithfulness by using an auxiliary LLM to create realistic counterfactuals and a Gaussian process model to quantify the causal effects of concepts at both the example- and dataset-level.", U, "swapped-entity", "abstract uses a hierarchical Bayesian model, not a Gaussian process"),
    ("qtWjSboqfe", "DEEM is evaluated on the newly constructed PhysBench benchmark and on POPE and MMVP, for visual hallucination and perception.", U, "swapped-entity", "DEEM's new benchmark is RobustVQA; PhysBench is another paper"),
    ("5U1rlpX68A", "The paper titled 'Vision and Language Synergy for Rehearsal Free Continual Learning' proposes Scalable Decoupled LoRA (SD-LoRA) for class incremental learning.", U, "wrong-title", "real title is 'SD-LoRA: Scalable Decoupled Low-Rank Adaptation for Class Incremental Learning'"),
    ("qNp86ByQlN", "In 'Reasoning of Large Language Models over Knowledge Graphs with Super-Relations', the authors propose the Epistemic GNN (EpiGNN) for systematic relational reasoning.", U, "wrong-title", "EpiGNN paper is titled 'Systematic Relational Reasoning With Epistemic Graph Neural Networks'"),
    ("C06kww3Qky", "The paper proposes SCORE as a recursive community detection algorithm for the logit-DCBM.", U, "swapped-entity", "the proposed recursive algorithm is R-SCORE; SCORE is only the baseline it is compared to"),
    ("q5EZ7gKcnW", "SFT+ILR outperforms SFT+PPO on several tasks with unreliable supervision (math, coding, and safe instruction-following).", U, "swapped-entity", "abstract compares against SFT+DPO; PPO is never mentioned"),
    ("xI71dsS3o4", "The survey 'Scaling Laws for Precision' covers over 50 papers that study scaling trends and proposes a checklist for authors of scaling law research.", U, "wrong-title", "real title is '(Mis)Fitting Scaling Laws: ...'; 'Scaling Laws for Precision' is another paper"),
    ("vjel3nWP2a", "Two novel attacks undo a language model's alignment and recover thousands of training examples from popular proprietary aligned models such as Anthropic's Claude.", U, "swapped-entity", "abstract names OpenAI's ChatGPT, not Claude"),
    ("97rOQDPmk2", "The authors study how the Lion optimizer optimizes a two-layer transformer, consisting of a softmax attention layer followed by a linear layer, on a linearly separable noisy dataset.", U, "swapped-entity", "the studied optimizer is SignGD (and Adam); Lion is not mentioned"),
    ("TmCcNuo03f", "The authors use the EngagingImageNet dataset to train ImageReward, an engagement-aware Vision Language Model that predicts viewer engagement of images.", U, "swapped-entity", "the trained model is EngageNet; ImageReward is an existing metric the abstract says fails to capture engagement"),
    ("kxnoqaisCT", "The authors collect the largest dataset for GUI visual grounding so far, containing 10M GUI elements and their referring expressions over 1.3M screenshots, and use it to train OS-Atlas.", U, "swapped-entity", "the trained model is UGround; OS-Atlas is another paper"),
    ("E4Fk3YuG56", "Taking the Llama 3 (8B) model as an example, CCE reduces the memory footprint of the loss computation from 24 GB to 1 MB.", U, "swapped-entity", "abstract's example model is Gemma 2 (2B), not Llama 3 (8B)"),
    ("DTqx3iqjkz", "In 'Learning Continually by Spectral Regularization', the authors show that GD on jointly separable linear classification tasks converges in direction to the joint max-margin solution.", U, "wrong-title", "real title is 'Convergence and Implicit Bias of Gradient Descent on Continual Linear Classification'"),
    # ---- swapped-number --------------------------------------------------------------------------
    ("dqMqAaw7Sq", "DAM reduces the attack success rate by 20-30 percentage points while sacrificing only about 1% in accuracy.", U, "swapped-number", "abstract says 2-10 percentage points"),
    ("lqTILjL6lP", "RESuM identifies an optimal design that reduces the neutron background by (66.5 ± 3.5)% while using only 13% of the computational resources compared to traditional methods.", U, "swapped-number", "abstract says 3.3% of the computational resources"),
    ("u2QdCiOgwA", "The dynamic pruning technique reduces inference time by approximately 50% while maintaining accuracy in multilingual/multi-task scenarios.", U, "swapped-number", "abstract says approximately 30%"),
    ("CkgKSqZbuC", "R2-Guard surpasses the SOTA method LlamaGuard by 21.6% on standard moderation datasets and by 59.9% against jailbreaking attacks.", U, "swapped-number", "abstract says 12.6% on standard moderation datasets"),
    ("AC5n7xHuR1", "AgentHarm includes 110 explicitly malicious agent tasks (440 with augmentations), covering 18 harm categories including fraud, cybercrime, and harassment.", U, "swapped-number", "abstract says 11 harm categories"),
    ("98d7DLMGdt", "Compared to a naive application of speculative decoding, LANTERN increases speed-ups by 2.75× and 1.82× relative to greedy decoding and random sampling, respectively, on LlamaGen.", U, "swapped-number", "abstract says 1.75× (greedy) and 1.82×"),
    ("Se6MgCtRhz", "Herald translator achieves an 86.7% accuracy (Pass@128) on formalizing statements in the miniF2F-test.", U, "swapped-number", "abstract says 96.7%"),
    ("PxRATSTDlS", "The estimated energy correlates above 0.9 with the ground truth, and evolution prediction accuracy exceeds the baseline by an average of 27.65%.", U, "swapped-number", "abstract says 17.65%"),
    ("YOpa6dTrpt", "PMR features data from 45 subjects interacting across 12 urban settings with 7 objects, encompassing 12,138 sequences.", U, "swapped-number", "abstract says 54 subjects"),
    ("30oIfmrcFO", "In the challenging 4 × 4 integer multiplication task, Seq-VCR achieves 99.5% exact match accuracy.", U, "swapped-number", "the 99.5% result is on the 5 × 5 multiplication task"),
    # ---- invented-author (and correct author statements) ----------------------------------------
    ("C06kww3Qky", "Fitting Networks with a Cancellation Trick by Jianqing Fan and Tracy Ke introduces the logit-DCBM.", U, "invented-author", "authors are Jiashun Jin and Jingming Wang"),
    ("Ty6TCjKNSF", "Mert Pilanci and Aaron Mishkin propose a massively parallel Newton scheme with Hessian sketching in 'Newton Meets Marchenko-Pastur'.", U, "invented-author", "Pilanci is an author but Aaron Mishkin is not (authors: Romanov, Zhang, Pilanci)"),
    ("Dzh0hQPpuf", "Student-Informed Teacher Training, by Sergey Levine and Chelsea Finn, proposes joint training of the teacher and student policies.", U, "invented-author", "authors are Scaramuzza, Xing, Aljalbout, Messikommer"),
    ("AC5n7xHuR1", "The AgentHarm benchmark was introduced by Nicholas Carlini and Florian Tramèr.", U, "invented-author", "neither is in AgentHarm's author list (they are authors of vjel3nWP2a)"),
    ("fMbLszVO1H", "Yann LeCun is an author of LongMamba, a training-free method for extending Mamba's context.", U, "invented-author", "LeCun is not in LongMamba's author list (he is an author of Seq-VCR)"),
    ("QjSOgxJ0hp", "Learning from End User Data with Shuffled Differential Privacy over Kernel Densities was written by Tal Wagner and Cynthia Dwork.", U, "invented-author", "Tal Wagner is the sole author; Cynthia Dwork is not listed"),
    ("Se6MgCtRhz", "Herald: A Natural Language Annotated Lean 4 Dataset is by Kaiyu Yang and Jia Deng.", U, "invented-author", "neither is an author (authors include Bin Dong, Guoxiong Gao, Jiedong Jiang)"),
    ("q5EZ7gKcnW", "Danqi Chen and Sanjeev Arora, authors of 'Iterative Label Refinement Matters More than Preference Optimization under Weak Supervision', find that DPO fails to improve the model beyond SFT under unreliable supervision.", U, "invented-author", "finding is in the abstract but the authors are Laidlaw, Steinhardt, Ye (Chen/Arora wrote uaMSBJDnRv)"),
    ("Ty6TCjKNSF", "Mert Pilanci is an author of Newton Meets Marchenko-Pastur: Massively Parallel Second-Order Optimization with Hessian Sketching and Debiasing.", S, "invented-author", "Mert Pilanci is in the author list (correct-author control)"),
    ("q5EZ7gKcnW", "Jacob Steinhardt is one of the authors of 'Iterative Label Refinement Matters More than Preference Optimization under Weak Supervision'.", S, "invented-author", "Jacob Steinhardt is in the author list (correct-author control)"),
    ("QjSOgxJ0hp", "Tal Wagner is the sole listed author of the paper on learning from end user data with shuffled differential privacy over kernel densities.", S, "invented-author", "author list is exactly ['Tal Wagner'] (correct-author control)"),
    ("AC5n7xHuR1", "AgentHarm, a benchmark for measuring harmfulness of LLM agents, was authored by a team including Maksym Andriushchenko, Dan Hendrycks, J Zico Kolter and Yarin Gal.", S, "invented-author", "all four are in the author list (correct-author control)"),
    ("30oIfmrcFO", "Yann LeCun and Ravid Shwartz-Ziv are among the authors of Seq-VCR, which proposes Sequential Variance-Covariance Regularization.", S, "invented-author", "both are in the author list and the abstract proposes Seq-VCR (correct-author control)"),
    ("G328D1xt4W", "Sergey Levine is one of the authors of the paper on fine-tuning discrete diffusion models via reward optimization for DNA and protein design.", S, "invented-author", "Sergey Levine is in the author list (correct-author control)"),
    ("5BjQOUXq7i", "Niklas Muennighoff is a co-author of RegMix: Data Mixture as Regression for Language Model Pre-training.", S, "invented-author", "Niklas Muennighoff is in the author list (correct-author control)"),
    ("11xgiMEI5o", "Marco Pavone and Sanja Fidler are among the authors of OmniRe: Omni Urban Scene Reconstruction.", S, "invented-author", "both are in the author list (correct-author control)"),
    ("JDzTI9rKls", "Gerhard Neumann is an author of 'Efficient Off-Policy Learning for High-Dimensional Action Spaces'.", S, "invented-author", "Gerhard Neumann is in the author list (correct-author control)"),
    ("5BjQOUXq7i", "RegMix was written by Percy Liang and Tatsunori Hashimoto.", U, "invented-author", "neither is an author (authors include Qian Liu, Niklas Muennighoff, Min Lin)"),
    ("JDzTI9rKls", "Sergey Levine is an author of 'Efficient Off-Policy Learning for High-Dimensional Action Spaces'.", U, "invented-author", "authors are Otto, Becker, Ngo, Neumann; Levine is not listed"),
    # ---- topic-only / overclaim / negation --------------------------------------------------------
    ("JDzTI9rKls", "Vlearn is evaluated on the humanoid and dog locomotion tasks of the DeepMind Control Suite.", U, "topic-only", "abstract only says 'various benchmark tasks'; no DeepMind Control Suite"),
    ("2PRpcmJecX", "The paper proves that policy gradient converges to the optimal policy at a linear rate in average-reward MDPs.", U, "overclaim", "abstract proves a sublinear O(1/T) rate"),
    ("1hQKHHUsMx", "The study finds that, for reasoning questions, the answers usually show up among the most influential pretraining documents.", U, "negation", "abstract: for reasoning questions the answers usually do NOT show up as highly influential"),
    ("uvHmnahyp1", "SynFlowNet's top-ranked molecules were synthesized and validated in a wet lab.", U, "topic-only", "abstract evaluates with SA scores and a retrosynthesis tool, no wet-lab synthesis"),
    ("PBjCTeDL6o", "UNI outperforms all existing attribution methods on every benchmark.", U, "overclaim", "abstract reports no benchmark comparison, only that UNI gives reliable baselines"),
    ("5AtHrq3B5R", "PnP-Flow requires backpropagation through ODEs, which makes it memory-intensive.", U, "negation", "abstract: method is memory-friendly as it avoids backpropagation through ODEs"),
    ("FCMpUOZkxi", "AUPD achieves optimal regret in every budget regime, including budgets much smaller than the square root of T.", U, "overclaim", "abstract studies B = Omega(sqrt T) and claims best-known bounds only there"),
    ("fGdF8Bq1FV", "The data-dependent Gaussian mixture prior regularizer is evaluated on ImageNet classification with vision transformers.", U, "topic-only", "abstract names no ImageNet or vision transformers; compares to VIB and CDVIB"),
    ("A1HhtITVEi", "CheapNet models protein-ligand interactions purely at the atom level, without any cluster-level representations.", U, "negation", "abstract: integrates atom-level with hierarchical cluster-level interactions"),
    ("Xo0Q1N7CGk", "The paper confirms with neural recordings that grid cells in the mammalian brain implement a conformal isometric embedding.", U, "overclaim", "abstract posits the hypothesis and tests it with numerical experiments/theory, no recordings"),
    ("p60Y6o85Cj", "The content-style identifiability framework is applied to unpaired image-to-image translation on CelebA-HQ and AFHQ.", U, "topic-only", "abstract only says 'experiments corroborate'; no datasets named"),
    ("3E8YNv1HjU", "The paper treats memorization in language models as a homogeneous phenomenon.", U, "negation", "abstract criticises the homogeneous view and proposes a taxonomy"),
    ("KzSGJy1PIf", "SURE provably guarantees exact unlearning, making the model indistinguishable from one retrained from scratch.", U, "overclaim", "abstract claims a better unlearning-utility trade-off empirically, no exact-unlearning guarantee"),
    ("GkWA6NjePN", "The learning-aware policy gradient algorithm is tested on StarCraft II micromanagement tasks.", U, "topic-only", "abstract mentions social dilemmas and iterated prisoner's dilemma, not StarCraft"),
    ("SXtl7NRyE5", "The authors find that naive feature alignment borrowed from classification TTA methods works well for regression.", U, "negation", "abstract: naive feature alignment is ineffective or even worse for regression"),
    ("KZu3xhPhke", "CS regularizers are guaranteed to be free of spurious stationary points for every optimization problem.", U, "overclaim", "abstract: they 'can be' free of spurious stationary points"),
    ("ww3CLRhF1v", "Using its SDE analysis, the paper proposes a new optimizer that outperforms AdamW on large language model pretraining.", U, "topic-only", "abstract derives SDEs for existing optimizers; no new optimizer or LLM pretraining result"),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args()

    corpus = {}
    for line in args.corpus.read_text().splitlines():
        if line.strip():
            p = json.loads(line)
            corpus[p["id"]] = p

    model_rows = []
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                if row["origin"] == "model":
                    model_rows.append(row)

    rows = []
    for pid, sentence, label, origin, reason in CONSTRUCTED:
        if pid not in corpus:
            raise SystemExit(f"unknown paper id {pid}")
        if origin == "verbatim" and sentence.rstrip(".") not in corpus[pid]["abstract"]:
            raise SystemExit(f"verbatim sentence not in abstract of {pid}: {sentence[:60]}")
        rows.append({"sentence": sentence, "paper_id": pid, "label": label, "reason": reason, "origin": origin})

    out = []
    seen = set()
    for row in model_rows + rows:
        key = (row["sentence"], row["paper_id"])
        if key in seen:
            continue
        seen.add(key)
        row = {"id": f"P{len(out) + 1:03d}", **{k: v for k, v in row.items() if k != "id"}}
        out.append(row)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out))
    print(f"wrote {len(out)} rows ({len(model_rows)} model, {len(rows)} constructed) to {args.out}")


if __name__ == "__main__":
    main()
