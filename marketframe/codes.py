"""Code tables of the spec ("Code tables"): ``securityType`` and ``industry`` codes -> names.

Used by ``Client(decode=True)`` / ``to_table(..., decode=True)``.
"""

from __future__ import annotations

SECURITY_TYPES: dict[str, str] = dict(
    line.split(" ", 1)
    for line in """00 unknown/reserved
01 common stock
02 convertible bond
03 exchangeable corporate/financial bond
04 ordinary preferred
05 exchangeable preferred
06 subscription warrant certificate
07 preferred with warrants
08 bond with warrants
09 bond after exercise/split of bond with warrants
10 domestic-underlying call warrant
11 domestic put warrant
12 foreign-underlying call warrant
13 foreign put warrant
14 domestic lower-bounded call warrant
15 domestic upper-bounded put warrant
16 domestic extendable lower-bounded call
17 domestic extendable upper-bounded put
18 beneficiary certificate (closed-end fund)
19 depositary receipt
20 DR convertible bond
21 DR bond with warrants
22 DR bond with warrants after exercise/split
23 DR warrant
24 ETF
25 ETF foreign-currency
26 leveraged ETF
27 leveraged ETF foreign-currency
28 inverse ETF
29 inverse ETF foreign-currency
30 futures-trust ETF
31 futures-trust ETF foreign-currency
32 bond ETF
33 bond ETF foreign-currency
34 asset-backed securities
35 real-estate asset trust beneficiary
36 REIT beneficiary
37 ETN
38 leveraged ETN
39 inverse ETN
40 bond ETN
41 option-strategy ETN
42 central-registry government bond
43 foreign bond
44 spot gold
45 balanced ETF
46 active ETF
47 bond active ETF""".splitlines()
)

INDUSTRIES: dict[str, str] = dict(
    line.split(" ", 1)
    for line in """00 none (ETFs, bonds, warrants and similar)
01 cement
02 food
03 plastics
04 textiles
05 electrical machinery
06 electrical appliances and cable
08 glass and ceramics
09 paper
10 steel
11 rubber
12 automobile
14 building materials and construction
15 shipping
16 tourism and hospitality
17 finance and insurance
18 trade and department stores (retired)
19 comprehensive
20 other
21 chemicals
22 biotech and medical
23 oil, electricity and gas
24 semiconductors
25 computers and peripherals
26 optoelectronics
27 communications and networking
28 electronic components
29 electronics distribution
30 information services
31 other electronics
32 cultural and creative
33 agricultural technology
34 e-commerce (retired)
35 green energy and environment
36 digital cloud
37 sports and leisure
38 home and living
80 managed stocks""".splitlines()
)

#: column name -> code table, used by ``decode=True``.
CODE_TABLES: dict[str, dict[str, str]] = {"industry": INDUSTRIES, "security_type": SECURITY_TYPES}
