
import Books.ConvexAnalysis_Rockafellar_1970.Chapters.Chap01

/-!
Overview page for Convex Analysis (Rockafellar, 1970).

This aggregation module imports the currently formalized sections in this book.
-/
