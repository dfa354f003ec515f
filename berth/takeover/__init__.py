"""Taking over a Zun deployment in place (``berth db import-zun``).

``source`` opens Zun's database read-only and checks that it is Zun 18's; each table
group has its module (``containers``, ``volumes``, ``images``, ``quotas``, ``nodes``,
``networks``, ``placement``) that turns Zun's rows into berth's and says which rows it
cannot carry and why; ``target`` checks that berth's database is empty and writes every
row in one transaction; ``run`` puts them together for the command.
"""
