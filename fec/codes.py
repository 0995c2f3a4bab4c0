"""Named Reed-Solomon codes of IEEE 802.3 and its neighbours.

All over GF(2^10) with p(x) = x^10 + x^3 + 1, alpha = 2, first consecutive root
alpha^0, systematic, message first (IEEE 802.3 Clause 91; ../shared/DESIGN.md).

* ``KR4`` = RS(528,514), t = 7 (Clause 91, 100GBASE-KR4/CR4, 25GBASE-R).
* ``KP4`` = RS(544,514), t = 15 (Clause 91/119, all PAM4 Ethernet PHYs).
* ``LL272`` = RS(272,258), t = 7: the low-latency "RS(272,257+1)" code. It is not an
  IEEE 802.3 code: it comes from the Ethernet Technology Consortium's Low Latency RS-FEC
  specification 1.0 (2018), where a codeword carries 257 data symbols plus one pad symbol
  (so k = 258) and uses the same generator polynomial as Clause 91's RS(528,514), of which
  it is a shorter shortening. IEEE 802.3ck's Clause 161 (RS-FEC-Int, 100GBASE-KR1/CR1) is
  instead RS(544,514) with two codewords interleaved: use ``KP4`` with ``interleave=2``.
"""

from __future__ import annotations

from .rs import RSCode

__all__ = ["KR4", "KP4", "LL272", "NAMED"]

KR4 = RSCode(528, 514, name="KR4 RS(528,514)")
KP4 = RSCode(544, 514, name="KP4 RS(544,514)")
LL272 = RSCode(272, 258, name="LL RS(272,257+1)")

NAMED = {"KR4": KR4, "KP4": KP4, "LL272": LL272}
