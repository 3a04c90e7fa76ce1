
import Books.ConvexAnalysis_Rockafellar_1970.Chapters.Chap01.section05

/-!
Chapter 01

Title: Chapter 01 -- Part I: Basic Concepts
-/
