#!/usr/bin/env python3
"""Whether our output departs from the reference run's only where the reference run departs from
the output PETSc ships for the case, and there agrees with the shipped output (petscdiff.sh).

  shipped_where_ref_departs.py REFERENCE OURS SHIPPED     (each masked as petscdiff masks numbers)

Exit 0 when every run of lines where OURS and REFERENCE differ is, on our side, the shipped
output's lines at that place (aligned with ours: no line of it missing or different there, nor at
the run's edges), and, on the reference's side, lines that the shipped output does not hold: PETSc's own test passes there, and the reference type is the one
that departs from it (aijcusparse's ksp ex56_latebs diverges where PETSc's expected output and ours
converge in 29 iterations). Lines where ours and the reference agree are not looked at: what they
print differently from the shipped output is this PETSc's or the GPU's, the same for both. Exit 1
otherwise, and when ours and the reference do not differ at all (another rule's business)."""
import difflib
import sys


def lines(path):
    with open(path, errors="replace") as f:
        return [" ".join(l.split()) for l in f.read().splitlines()]  # as diff -w compares


def aligned(a, b):
    """indices of a, and of b, that an alignment of a with b matches"""
    ma, mb = set(), set()
    for blk in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        ma.update(range(blk.a, blk.a + blk.size))
        mb.update(range(blk.b, blk.b + blk.size))
    return ma, mb


def touches(op, j1, j2):
    """whether a difference (shipped against ours) falls on or at the edge of ours[j1:j2]"""
    _, _, l1, l2 = op
    if l1 == l2:  # lines of the shipped output that ours lacks, before ours[l1]
        return j1 <= l1 <= j2
    return l1 < j2 and j1 < l2 if j1 < j2 else l1 < j1 < l2


def main():
    ref, ours, shipped = (lines(p) for p in sys.argv[1:4])
    ref_shipped, _ = aligned(ref, shipped)
    apart = [op[1:] for op in difflib.SequenceMatcher(None, shipped, ours, autojunk=False).get_opcodes() if op[0] != "equal"]
    differs = False
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ref, ours, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        differs = True
        # ours is the shipped output there, line for line, and the reference's lines are not
        if any(touches(op, j1, j2) for op in apart) or any(i in ref_shipped for i in range(i1, i2)):
            return 1
    return 0 if differs else 1


if __name__ == "__main__":
    sys.exit(main())
